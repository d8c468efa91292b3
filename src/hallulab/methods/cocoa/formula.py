"""CoCoA's formulas (Vashurin et al., 2025), as lm-polygraph 0.7.0's ``CocoaMSP``, ``CocoaPPL``
and ``CocoaMTE`` compute them, in the same float64 operations.

For the response y* with token log-probabilities log p(y*_i) and next-token entropies H_i, and
its similarities g_j = (g(y*, y_j) + g(y_j, y*)) / 2 to the samples y_1..y_M (both orders
averaged, as lm-polygraph's ``GreedyCrossEncoderSimilarityMatrixCalculator`` gives
``greedy_sentence_similarity``):

    D(y*) = (1/M) sum_j (1 - g_j)              the mean dissimilarity (consistency)
    CoCoA_MSP = -sum_i log p(y*_i) * D(y*)     (maximum sequence probability, as -log p(y* | x))
    CoCoA_PPL = -(1/L) sum_i log p(y*_i) * D(y*)   (perplexity, as its logarithm)
    CoCoA_MTE = (1/L) sum_i H_i * D(y*)        (mean token entropy)

Higher means more uncertain.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Values = Sequence[float] | np.ndarray


def symmetric_similarity(forward: Values, backward: Values) -> np.ndarray:
    """g_j = (g(y*, y_j) + g(y_j, y*)) / 2 for each sample."""
    return (np.asarray(forward, dtype=np.float64) + np.asarray(backward, dtype=np.float64)) / 2


def mean_dissimilarity(similarity: Values) -> float:
    """D(y*) = (1/M) sum_j (1 - g_j)."""
    return float(np.mean(1 - np.asarray(similarity, dtype=np.float64)))


def cocoa_msp(log_likelihoods: Values, similarity: Values) -> float:
    """-log p(y* | x) * D(y*)."""
    return float(-np.sum(log_likelihoods) * mean_dissimilarity(similarity))


def cocoa_ppl(log_likelihoods: Values, similarity: Values) -> float:
    """-(1/L) sum_i log p(y*_i) * D(y*)."""
    return float(-np.mean(log_likelihoods) * mean_dissimilarity(similarity))


def cocoa_mte(entropies: Values, similarity: Values) -> float:
    """(1/L) sum_i H_i * D(y*)."""
    return float(np.mean(entropies) * mean_dissimilarity(similarity))
