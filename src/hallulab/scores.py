"""Typed records for what the aggregate stage hands to the evaluate stage.

A method produces one :class:`VariantScores` per variant (a variant name encodes its
hyperparameters, e.g. ``ngram_n1_max``): a score for every sentence of every passage and
one passage-level score. Higher always means "more likely hallucinated".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


def _encode_float(value: float) -> float | str:
    """JSON has no infinity; an unbounded score (n-gram -log 0) is written as a string."""
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if math.isnan(value):
        raise ValueError("NaN score")
    return value


def _decode_float(value: float | str) -> float:
    return float(value)


@dataclass(frozen=True)
class VariantScores:
    """Sentence and passage scores of one method variant over a data set."""

    variant: str
    sentence_scores: Mapping[str, Sequence[float]]
    passage_scores: Mapping[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            "sentence_scores": {k: [_encode_float(x) for x in v] for k, v in self.sentence_scores.items()},
            "passage_scores": {k: _encode_float(v) for k, v in self.passage_scores.items()},
        }

    @classmethod
    def from_dict(cls, variant: str, raw: Mapping[str, Any]) -> VariantScores:
        return cls(
            variant=variant,
            sentence_scores={k: [_decode_float(x) for x in v] for k, v in raw["sentence_scores"].items()},
            passage_scores={k: _decode_float(v) for k, v in raw["passage_scores"].items()},
        )


@dataclass(frozen=True)
class MethodScores:
    """All variants of one method, with diagnostics (counts the paper's handling rules produce)."""

    method: str
    variants: Mapping[str, VariantScores]
    diagnostics: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "diagnostics": dict(self.diagnostics),
            "variants": {name: v.to_dict() for name, v in self.variants.items()},
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> MethodScores:
        return cls(
            method=raw["method"],
            diagnostics=raw.get("diagnostics", {}),
            variants={name: VariantScores.from_dict(name, v) for name, v in raw["variants"].items()},
        )
