"""What Self-Familiarity's score step stores (:class:`hallulab.methods.raw_scores.RawScores`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hallulab.methods.raw_scores import RawScores


@dataclass
class SelfFamiliarityScores(RawScores):
    """``knobs``: the score step's settings; ``concepts``: concept -> explanation, masked
    explanation, constrained-search hypotheses; ``baselines``: record -> Table 2's baseline
    replies and similarities; ``counts``: what the steps' handling rules did;
    ``skipped_record_ids``: the records left out, sorted (no prompt: :mod:`hallulab.methods.skipped`)."""

    knobs: dict[str, Any]
    concepts: dict[str, dict[str, Any]]
    baselines: dict[str, dict[str, Any]]
    counts: dict[str, int] = field(default_factory=dict)
    skipped_record_ids: list[str] = field(default_factory=list)
