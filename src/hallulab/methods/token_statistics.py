"""The token-probability baselines, one implementation each, shared by every method that
reports them: the grey-box baselines of SelfCheckGPT (§5, Table 2: Avg(-log p), Max(-log p),
Avg(H), Max(H)), CCP's baselines (Fadeeva et al., Eq. 1-3: Maximum Probability, Perplexity,
Maximum Entropy) and Self-Familiarity's greedy baselines (Appendix C.1-C.3:
Greedy-Perplexity, -AvgLogP, -MinLogP).

Every function takes the per-token values of one unit (log-probabilities log p(x_j), or the
entropies H_j of the next-token distributions) and returns a score where higher means less
certain, the direction every evaluation here expects.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Values = Sequence[float] | np.ndarray


def mean_neglogp(logprobs: Values) -> float:
    """Avg(-log p) = -(1/J) sum_j log p(x_j) (SelfCheckGPT; Self-Familiarity's Greedy-AvgLogP)."""
    return float(-np.mean(logprobs))


def max_neglogp(logprobs: Values) -> float:
    """Max(-log p) = max_j -log p(x_j) (SelfCheckGPT; Self-Familiarity's Greedy-MinLogP)."""
    return float(-np.min(logprobs))


def perplexity(logprobs: Values) -> float:
    """exp(-(1/J) sum_j log p(x_j)) (CCP Eq. 2; Self-Familiarity's Greedy-Perplexity)."""
    return float(math.exp(mean_neglogp(logprobs)))


def max_probability(logprobs: Values) -> float:
    """1 - prod_j p(x_j) (CCP Eq. 1, Maximum Probability)."""
    return float(1.0 - math.exp(float(np.sum(logprobs))))


def mean_entropy(entropies: Values) -> float:
    """Avg(H) = (1/J) sum_j H_j (SelfCheckGPT)."""
    return float(np.mean(entropies))


def max_entropy(entropies: Values) -> float:
    """Max(H) = max_j H_j (SelfCheckGPT; CCP Eq. 3)."""
    return float(np.max(entropies))
