"""What HalluCheck's score step stores (:class:`hallulab.methods.raw_scores.RawScores`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from hallulab.methods.raw_scores import CountsAndSkipped, RawScores


class ReadSpan(TypedDict):
    """An answer span of a text: its characters ``start:end`` of the text, its ``text`` and
    ``how`` it was read (:data:`hallulab.methods.hallucheck.spans.HOW_READ`)."""

    text: str
    start: int
    end: int
    how: str


class RegeneratedAnswer(TypedDict):
    """One regenerated answer: the reply's ``text``, its ``steps`` (the generated tokens, which
    locate the answer span's steps; the aggregate step falls back on ``text`` without them),
    the ``top`` log-probabilities of every step (what the KS test reads) and its answer
    ``span``, read out of :func:`reply_text` (None: a reply without words)."""

    text: str
    steps: NotRequired[list[str]]
    top: list[list[float | None]]  # None: a token outside the sampled distribution (probability 0)
    span: NotRequired[ReadSpan | None]


def reply_text(answer: Mapping[str, Any]) -> str:
    """The reply as generated: its steps joined (what the span's characters index), else its text."""
    steps = answer.get("steps")
    return "".join(steps) if steps is not None else str(answer["text"])


class CheckedFact(TypedDict):
    """One atomic fact of a record: its ``question`` (None: none could be formed, so no answers),
    the ``original_span`` that answers it in the record's response, the regenerated ``answers``
    per ``role/decoding``, the teacher-forced ``fact_logprobs`` (a white-box generator only) and
    the ``judge``'s verdict per ``role/decoding`` on the two spans (None: unparseable, or a span
    missing; only when the judge was asked)."""

    index: int
    text: str
    sentence_index: int
    question: str | None
    original_span: NotRequired[ReadSpan | None]
    answers: NotRequired[dict[str, RegeneratedAnswer]]
    fact_logprobs: NotRequired[list[float]]
    judge: NotRequired[dict[str, bool | None]]


@dataclass
class HalluCheckScores(RawScores):
    """``taggings``: the fact taggings checked; ``regenerations``: ``role/decoding`` keys;
    ``llms``: the catalogue entry of each role; ``records``: record -> tagging -> facts, each
    with its question, regenerated answers (text, steps, top-k log-probabilities), the
    answer spans, the teacher-forced fact log-probabilities and the judge's verdicts; ``diagnostics``: counts."""

    taggings: list[str]
    regenerations: list[str]
    llms: dict[str, str]
    records: dict[str, dict[str, list[CheckedFact]]]
    diagnostics: CountsAndSkipped = field(default_factory=dict)
