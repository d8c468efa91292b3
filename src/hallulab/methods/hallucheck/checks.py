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

**The answer span.** A regenerated reply is often a sentence ("Marie Curie was born in
Warsaw, Poland."), and a short fact ("Warsaw") never reaches token F1 0.6 against all of it.
The released code (ConFactCheck) first takes the answer span out of the reply with an
extractive QA model (transformers' ``question-answering`` pipeline), compares the spans, and
runs the KS test on the span's steps only (its ``break`` is taken when the span's tokens are
not found among the generated tokens: the fact is then flagged). No extractive QA model is
installed offline; the stated substitute here is :func:`answer_span`, the window of the
reply's words that best matches the fact (highest token F1, as many words as the fact up to
two more, so a shared "I" cannot stand for "Elizabeth I"; ties go to the earliest, then the
shortest). Unlike a QA model it reads the fact,
so it finds the fact whenever the reply states it: alignment on the span is close to
containment. Alignment on the whole reply and the KS test on every step are kept as
labelled variants (``_wholereply``, ``_allsteps``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

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
    from scipy.stats import kstest  # here, not at the top: importing scipy.stats is slow, and every stage would pay it

    return bool(kstest(p, "uniform", args=(low, high - low)).pvalue > alpha)


def guessed(steps: Sequence[Sequence[float]], alpha: float = 0.05, max_steps: int = 50) -> bool:
    """Whether any of the first ``max_steps`` steps is uniform."""
    return any(step_is_uniform(step, alpha) for step in steps[:max_steps])


def _words(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def answer_span(reply: str, fact: str, extra_words: int = 2) -> tuple[int, int] | None:
    """Character span of the reply's word window that best matches the fact (token F1), as long
    as the fact up to ``extra_words`` more words; None for a reply without words."""
    words = _words(reply)
    if not words:
        return None
    shortest = min(max(1, len(fact.split())), len(words))
    longest = shortest + extra_words
    best: tuple[float, int, int] | None = None  # (F1, start word, end word)
    for start in range(len(words) - shortest + 1):
        for end in range(start + shortest, min(len(words), start + longest) + 1):
            f1 = token_f1(reply[words[start][0] : words[end - 1][1]], fact)
            if best is None or f1 > best[0]:
                best = (f1, start, end)
    assert best is not None
    return words[best[1]][0], words[best[2] - 1][1]


def span_steps(steps: Sequence[str], span: tuple[int, int]) -> list[int]:
    """Indices of the generated steps whose characters overlap ``span`` of ``"".join(steps)``."""
    found, offset = [], 0
    for index, piece in enumerate(steps):
        end = offset + len(piece)
        if end > span[0] and offset < span[1] and piece.strip():
            found.append(index)
        offset = end
    return found
