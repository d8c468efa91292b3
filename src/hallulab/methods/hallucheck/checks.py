"""HalluCheck's two checks on a regenerated fact (§3; Algorithm 1).

1. **Fact alignment**: the answer the LLM regenerates for the question about fact a must
   agree with a. Measured as the token-set F1 of the two after SQuAD normalisation (lower case,
   no punctuation, no articles), aligned when F1 >= 0.6 (the threshold of the paper's first
   version); ``containment`` (every token of the fact occurs in the answer) and an LLM
   ``judge`` are the alternatives.
2. **Probability check** for an aligned fact: at each of the first 50 generated steps, the
   top-5 token probabilities renormalised, p_k = e^{s_k} / sum_{m<=5} e^{s_m}, are tested
   against the uniform distribution on [min p, max p] with a one-sample Kolmogorov-Smirnov
   test; p-value > 0.05 means the model was guessing, and one such step flags the fact.

A fact is hallucinated when it is not aligned, or aligned but some step is uniform.
The response score is the share of hallucinated facts (Algorithm 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import kstest

from hallulab.text.answers import normalize_answer

ALIGNMENTS = ("f1", "containment", "judge")


def token_f1(prediction: str, reference: str) -> float:
    """Token-set F1 of two texts after SQuAD normalisation (0 when either is empty)."""
    predicted = set(normalize_answer(prediction).split())
    expected = set(normalize_answer(reference).split())
    common = len(predicted & expected)
    if not predicted or not expected or common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def contained(fact: str, answer: str) -> bool:
    tokens = set(normalize_answer(fact).split())
    return bool(tokens) and tokens <= set(normalize_answer(answer).split())


def renormalised_top(logprobs: Sequence[float]) -> np.ndarray:
    """p_k = e^{s_k} / sum_m e^{s_m} over the step's top-5 log-probabilities."""
    values = np.asarray(logprobs, dtype=np.float64)
    weights = np.exp(values - values.max())
    return weights / weights.sum()


def step_is_uniform(logprobs: Sequence[float], alpha: float = 0.05) -> bool:
    """KS test of the renormalised top-k against uniform on [min, max]: p-value > alpha."""
    if len(logprobs) < 2:
        return False
    p = renormalised_top(logprobs)
    low, high = float(p.min()), float(p.max())
    if math.isclose(low, high):
        return True  # exactly flat: the model had no preference at all
    return bool(kstest(p, "uniform", args=(low, high - low)).pvalue > alpha)


def guessed(steps: Sequence[Sequence[float]], alpha: float = 0.05, max_steps: int = 50) -> bool:
    """Whether any of the first ``max_steps`` steps is uniform."""
    return any(step_is_uniform(step, alpha) for step in steps[:max_steps])
