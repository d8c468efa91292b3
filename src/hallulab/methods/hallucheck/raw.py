"""What HalluCheck's score step stores (:class:`hallulab.methods.raw_scores.RawScores`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hallulab.methods.raw_scores import RawScores


@dataclass
class HalluCheckScores(RawScores):
    """``taggings``: the fact taggings checked; ``regenerations``: ``role/decoding`` keys;
    ``llms``: the catalogue entry of each role; ``records``: record -> tagging -> facts, each
    with its question, regenerated answers (text, steps, top-k log-probabilities), the
    teacher-forced fact log-probabilities and the judge's verdicts; ``diagnostics``: counts."""

    taggings: list[str]
    regenerations: list[str]
    llms: dict[str, str]
    records: dict[str, dict[str, list[dict[str, Any]]]]
    diagnostics: dict[str, Any] = field(default_factory=dict)
