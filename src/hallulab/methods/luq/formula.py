"""LUQ's NLI support score and its two readings' uncertainties, as pure functions.

The support of a hypothesis h by a premise r is the NLI model's entailment against its
contradiction, the neutral class left out (Zhang et al., 2024; lm-polygraph 0.7.0's ``LUQ``):

    S(h, r) = exp(z_e) / (exp(z_e) + exp(z_c)) = p_e / (p_e + p_c)

with z the logits and p the softmax probabilities of the pair (premise r, hypothesis h): the
softmax's normaliser cancels, so the probabilities the ``nli_pair_matrix`` artifact stores give
the same number as the logits. 1 - S is SelfCheckGPT's P(contradict) (Manakul et al., 2023,
Eq. 9) of the same pair, which is what the sentence reading's score step stores.
"""

from __future__ import annotations

import numpy as np

#: the sentence reading's variant name (the score step stores it, the aggregate step reads it)
VARIANT = "luq_sentence"


def support(entail: np.ndarray, contra: np.ndarray) -> np.ndarray:
    """S = p_e / (p_e + p_c), elementwise; both probabilities 0 somewhere is an error."""
    total = entail + contra
    if np.any(total <= 0):
        raise ValueError("entailment and contradiction probabilities are both 0 for a pair: no support to read")
    return np.asarray(entail / total)


def samples_uncertainty(entail: np.ndarray, contra: np.ndarray) -> float:
    """lm-polygraph's reading over N >= 2 samples, no sentence splitting: each sample's mean
    support by the others, U = 1 - (1/N) sum_a (1/(N-1)) sum_{b != a} S[a][b] (rows premises,
    columns hypotheses: the mean runs over every ordered pair, so the direction does not matter)."""
    n = entail.shape[0]
    if n < 2:
        raise ValueError(f"LUQ over samples needs two samples or more, got {n}")
    scores = support(entail, contra)
    by_sample = (scores.sum(axis=1) - np.diag(scores)) / (n - 1)
    return float(1.0 - by_sample.mean())
