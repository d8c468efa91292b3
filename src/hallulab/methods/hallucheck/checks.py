"""HalluCheck's two checks on a regenerated fact (§3; Algorithm 1), as the released code
(raavi02/ConFactCheck, ``main.py``) computes them, with this project's corrections as labelled
alternatives.

1. **Fact alignment**: the answer the LLM regenerates for the question about fact a must
   agree with the original answer: the answer span of the regenerated reply against the
   answer span of the original response ("The answer span" below). The released code asks an
   LLM judge whether the two spans refer to the same thing (the headline,
   :mod:`hallulab.methods.hallucheck.judge`); its commented-out alternative, kept as the
   labelled ``_f1`` reading, is token-set F1 >= 0.6 (the threshold of the paper's first
   version): the released ``calculate_f1_score`` splits the two spans on whitespace as they
   are (case and punctuation kept), :func:`split_token_f1`. :func:`token_f1` normalises like
   SQuAD first (lower case, no punctuation, no articles): the labelled ``_squadf1`` reading.
   ``containment`` (every token of the original span occurs in the regenerated one) is a
   further choice of the headline's measure.
2. **Probability check** for an aligned fact: at each tested step (the first 50 of the up to
   100 regenerated; the released ``range(0, 50)``), the top-5 token
   probabilities renormalised, p_k = e^{s_k} / sum_{m<=5} e^{s_m}, go through a one-sample
   Kolmogorov-Smirnov test against a uniform distribution; p-value > 0.05 means the model was
   guessing, and one such step flags the fact. The released code calls
   ``kstest(p, 'uniform', args=(min p, max p))``; scipy reads ``args`` as (loc, scale), so its
   reference is U[min p, min p + max p] (:data:`KS_RELEASED`, the headline). §3 describes
   U[min p, max p], scale = max - min (:data:`KS_MINMAX`, the labelled ``_ksminmax``
   reading). The two disagree most on a flat top-5: every value then sits at the released
   reference's lower end (p-value near 0, not uniform), while U[min, max] collapses to a point
   (counted as uniform).

A fact is hallucinated when it is not aligned, or aligned but some tested step is uniform.
The response score is the share of hallucinated facts (Algorithm 1).

**The answer span.** A regenerated reply is often a sentence ("Marie Curie was born in
Warsaw, Poland."), and a short fact never reaches token F1 0.6 against all of it. The released
code reads the answer span to the question out of the original response and out of the
regenerated reply with an extractive QA model, compares the two spans, and runs the KS test on
the regenerated span's steps: :mod:`hallulab.methods.hallucheck.spans` reads them (offline,
the configured LLM role copies the span). This project's earlier reading, kept as the labelled
``_factwindow`` variant, compares the fact itself with :func:`answer_span`, the window of the
reply's words that best matches the fact (highest token F1, as many words as the fact up to
two more, so a shared "I" cannot stand for "Elizabeth I"; ties go to the earliest, then the
shortest), trimmed of the punctuation at its ends as an extractive span is
(:func:`extracted_span`). Unlike a QA model it reads the fact, so it finds the fact whenever
the reply states it: alignment on it is close to containment. Alignment on the whole reply
and the KS test on every step are kept as labelled variants (``_wholereply``, ``_allsteps``).

**The span's steps** (:func:`span_check_steps`). The released code re-tokenises the span, looks
for its tokens among the generated ones, and with a tokenizer that prepends a BOS token (the
paper's Mistral-7B) always also tests the step before the span. A span it cannot find among
the tested steps (the first 50 of up to 100 regenerated) flags the fact when it has several
tokens and passes it when it has one (the search then returns nothing and no step is tested).
Here the span is located by characters, so it is found whenever it lies within the tested
steps; ``released`` adds the step before and applies the same two outcomes to a span beyond
them, ``own`` (the ``_ksminmax`` reading) tests the span's own steps and flags any span it
cannot test. Not reproduced: when a multi-token span is not found, the released loop ``break``s and leaves
every later fact of the response at its initial "hallucinated".
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hallulab.text.answers import normalize_answer

F1_TOKENS = ("split", "squad")  # whitespace tokens as they are (released) | SQuAD-normalised
KS_RELEASED, KS_MINMAX = "released", "minmax"
KS_REFERENCES = (KS_RELEASED, KS_MINMAX)
SPAN_STEP_RULES = ("released", "own")


def token_f1(prediction: str, reference: str) -> float:
    """Token-set F1 of two texts after SQuAD normalisation (0 when either is empty)."""
    predicted = set(normalize_answer(prediction).split())
    expected = set(normalize_answer(reference).split())
    common = len(predicted & expected)
    if not predicted or not expected or common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def split_token_f1(prediction: str, reference: str) -> float:
    """Token-set F1 of the two texts' whitespace tokens, case and punctuation kept (the released
    ``calculate_f1_score``; 0 when either is empty)."""
    predicted, expected = set(prediction.split()), set(reference.split())
    common = len(predicted & expected)
    if not predicted or not expected or common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def alignment_f1(prediction: str, reference: str, tokens: str = "split") -> float:
    """Token F1 under ``tokens``: ``split`` (released) or ``squad`` (normalised first)."""
    return split_token_f1(prediction, reference) if tokens == "split" else token_f1(prediction, reference)


def contained(fact: str, answer: str) -> bool:
    tokens = set(normalize_answer(fact).split())
    return bool(tokens) and tokens <= set(normalize_answer(answer).split())


def renormalised_top(logprobs: Sequence[float | None]) -> np.ndarray:
    """p_k = e^{s_k} / sum_m e^{s_m} over the step's top-5 log-probabilities (``None``: a token
    outside the sampled distribution, s_k = -inf, p_k = 0)."""
    values = np.array([-np.inf if v is None else v for v in logprobs], dtype=np.float64)
    weights = np.exp(values - values.max())
    return weights / weights.sum()


def step_is_uniform(logprobs: Sequence[float | None], alpha: float = 0.05, reference: str = KS_RELEASED) -> bool:
    """KS test of the renormalised top-k against a uniform distribution: p-value > alpha.

    ``released``: U[min p, min p + max p], scipy's (loc, scale) reading of the released
    ``args=(min, max)``; ``minmax``: U[min p, max p], an exactly flat top-k counting as uniform."""
    if len(logprobs) < 2:
        return False
    p = renormalised_top(logprobs)
    low, high = float(p.min()), float(p.max())
    if reference == KS_MINMAX and math.isclose(low, high):
        return True  # exactly flat: the model had no preference at all
    scale = high if reference == KS_RELEASED else high - low
    from scipy.stats import kstest  # here, not at the top: importing scipy.stats is slow, and every stage would pay it

    return bool(kstest(p, "uniform", args=(low, scale)).pvalue > alpha)


def guessed(
    steps: Sequence[Sequence[float | None]], alpha: float = 0.05, max_steps: int = 50, reference: str = KS_RELEASED
) -> bool:
    """Whether any of the first ``max_steps`` steps is uniform."""
    return any(step_is_uniform(step, alpha, reference) for step in steps[:max_steps])


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


def extracted_span(reply: str, span: tuple[int, int]) -> tuple[int, int] | None:
    """The span trimmed of whitespace and punctuation at its ends, as an extractive QA model's
    answer starts and ends on a word; None when nothing is left."""
    start, end = span
    edge = set(string.whitespace) | set(string.punctuation)
    while start < end and reply[start] in edge:
        start += 1
    while end > start and reply[end - 1] in edge:
        end -= 1
    return (start, end) if start < end else None


@dataclass(frozen=True)
class LocatedAnswer:
    """A regenerated reply and its answer span for one fact: the reply as generated (the
    decoding steps joined, else the stored text), the extracted span's characters (None when
    the reply has no word left) and its text ("" without a span)."""

    reply: str
    span: tuple[int, int] | None

    @property
    def span_text(self) -> str:
        return self.reply[self.span[0] : self.span[1]] if self.span else ""


def locate_answer(steps: Sequence[str] | None, text: str, fact: str) -> LocatedAnswer:
    """The ``_factwindow`` reading of a reply's answer span: :func:`answer_span` (the word
    window best matching the fact), trimmed by :func:`extracted_span`."""
    reply = "".join(steps) if steps is not None else text
    window = answer_span(reply, fact)
    return LocatedAnswer(reply, extracted_span(reply, window) if window else None)


def span_steps(steps: Sequence[str], span: tuple[int, int]) -> list[int]:
    """Indices of the generated steps whose characters overlap ``span`` of ``"".join(steps)``."""
    found, offset = [], 0
    for index, piece in enumerate(steps):
        end = offset + len(piece)
        if end > span[0] and offset < span[1] and piece.strip():
            found.append(index)
        offset = end
    return found


@dataclass(frozen=True)
class SpanCheckSteps:
    """The steps a fact's KS check reads; ``verdict`` is set instead when the span cannot be
    tested (True: flagged, False: passed)."""

    indices: tuple[int, ...]
    verdict: bool | None = None
    outcome: str = "tested"  # tested | beyond_one_token_passed | beyond_flagged | not_located_flagged


def span_check_steps(
    steps: Sequence[str], span: tuple[int, int], max_steps: int, rule: str = "released"
) -> SpanCheckSteps:
    """The span's steps among the first ``max_steps`` (module docstring, "The span's steps")."""
    located = span_steps(steps, span)
    inside = [i for i in located if i < max_steps]
    if not located:
        return SpanCheckSteps((), True, "not_located_flagged")
    if not inside:
        if rule == "released" and len(located) == 1:
            return SpanCheckSteps((), False, "beyond_one_token_passed")
        return SpanCheckSteps((), True, "beyond_flagged")
    if rule == "released" and inside[0] > 0:
        inside = [inside[0] - 1, *inside]
    return SpanCheckSteps(tuple(inside))
