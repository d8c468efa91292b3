"""SAR's formulas (Duan et al., 2024, §4), as lm-polygraph 0.7.0's ``TokenSAR``, ``SentenceSAR``
and ``SAR`` compute them, in the same float64 operations and order.

Token level, one text z_1..z_L with log-probabilities log p(z_i) and token similarities
g_i = g(x ∪ z, x ∪ z without z_i) (:mod:`hallulab.methods.sar.relevance`):

    R_T(z_i) = 1 - g_i,    R~_T(z_i) = R_T(z_i) / sum_j R_T(z_j),
    TokenSAR(z) = -sum_i R~_T(z_i) log p(z_i)

Sentence level, samples s_1..s_K with probabilities p_j and similarities g(s_j, s_k):

    R_S(s_j) = sum_{k != j} g(s_j, s_k) p_k,
    E(s_j) = -log(p_j + R_S(s_j) / t),    SentenceSAR = (1/K) sum_j E(s_j)

with p_j = p(s_j | x) = exp(sum of s_j's token log-probabilities); SAR takes instead the
token-shifted probability p_j = exp(-TokenSAR(s_j)). Higher means more uncertain.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Values = Sequence[float] | np.ndarray


def token_sar(log_likelihoods: Values, token_similarity: Values) -> float | None:
    """TokenSAR(z) = -sum_i R~_T(z_i) log p(z_i), R~_T the relevances 1 - g_i normalised to sum
    to one; None where every relevance is zero (lm-polygraph divides by their zero sum)."""
    relevance = 1 - np.asarray(token_similarity, dtype=np.float64)
    total = relevance.sum()
    if len(relevance) == 0 or total == 0:
        return None
    weighted = -np.asarray(log_likelihoods, dtype=np.float64) * (relevance / total)
    return float(weighted.sum())


def shifted_entropy(probabilities: np.ndarray, similarity: Values, temperature: float) -> float:
    """(1/K) sum_j -log(p_j + sum_{k != j} g(s_j, s_k) p_k / t): the sentence-level shift of
    SentenceSAR and SAR, for the samples' probabilities p and similarity matrix g (row j, the
    sample whose relevance is read)."""
    matrix = np.asarray(similarity, dtype=np.float64)
    shifted = probabilities * matrix * (1 - np.eye(matrix.shape[0]))
    relevance = shifted.sum(-1) / temperature
    return float((-np.log(relevance + probabilities)).mean())


def sentence_sar(log_probs: Values, similarity: Values, temperature: float) -> float:
    """SentenceSAR: :func:`shifted_entropy` of the samples' sequence probabilities
    p_j = exp(log p(s_j | x))."""
    return shifted_entropy(np.exp(np.asarray(log_probs, dtype=np.float64)), similarity, temperature)


def sar(token_sars: Values, similarity: Values, temperature: float) -> float:
    """SAR: :func:`shifted_entropy` of the token-shifted probabilities p_j = exp(-TokenSAR(s_j))."""
    return shifted_entropy(np.exp(-np.asarray(token_sars, dtype=np.float64)), similarity, temperature)
