"""Sentence x sample matrices: what a sample-matrix method's score step stores (per passage, an
I x N_max matrix of per-sample sentence scores), and every passage's (sentence, sample) pairs
flattened into one request and back. NumPy only, so that a method's declaration (its ``raw``
class) imports nothing heavier."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hallulab.core.errors import RecordError, StaleScoresError
from hallulab.data.schema import Record


@dataclass(frozen=True)
class SampleMatrices:
    """Per passage, an I x N_max matrix of per-sample sentence scores (higher = less supported)."""

    method: str
    variant: str
    identity: Mapping[str, Any]
    matrices: Mapping[str, np.ndarray]
    diagnostics: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "variant": self.variant,
            "identity": dict(self.identity),
            "diagnostics": dict(self.diagnostics),
            "matrices": {pid: matrix.tolist() for pid, matrix in self.matrices.items()},
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> SampleMatrices:
        matrices = {}
        for pid, rows in raw["matrices"].items():
            matrix = np.asarray(rows, dtype=np.float64)
            if matrix.ndim != 2:
                matrix = matrix.reshape(len(rows), -1)
            matrices[pid] = matrix
        return cls(raw["method"], raw["variant"], raw["identity"], matrices, raw.get("diagnostics", {}))


@dataclass(frozen=True)
class SampleMatrixScores:
    """What a sample-matrix method's score step returns and its aggregate step reads: one
    :class:`SampleMatrices` per variant it scores (SelfCheck-Prompt stores two, its verdicts and
    its P(No) reading; NLI and BERTScore one). Stored as ``{"variants": [...]}``."""

    variants: tuple[SampleMatrices, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"variants": [stored.to_dict() for stored in self.variants]}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str = "") -> SampleMatrixScores:
        if set(raw) != {"variants"} or not isinstance(raw["variants"], list):
            raise StaleScoresError(where, cls.__name__, f"expected only a 'variants' list, got keys {sorted(raw)}")
        # a variant without its fields: MethodSpec.read_raw names the file
        return cls(tuple(SampleMatrices.from_dict(stored) for stored in raw["variants"]))


def sentence_sample_grid(records: Sequence[Record], method: str) -> tuple[list[str], list[str]]:
    """Flattened (sentence, sample) pairs of every passage, sentence-major: the inputs of one
    batched request for the whole data set."""
    sentences: list[str] = []
    samples: list[str] = []
    for record in records:
        if not record.samples:
            raise RecordError(record.id, "samples", f"{method} needs at least one sample")
        for sentence in record.sentences:
            sentences.extend([sentence] * len(record.samples))
            samples.extend(record.samples)
    return sentences, samples


def unflatten(records: Sequence[Record], flat: np.ndarray) -> dict[str, np.ndarray]:
    """Inverse of :func:`sentence_sample_grid`: each passage's I x N_max matrix."""
    out: dict[str, np.ndarray] = {}
    cursor = 0
    for record in records:
        size = len(record.sentences) * len(record.samples)
        out[record.id] = flat[cursor : cursor + size].reshape(len(record.sentences), len(record.samples))
        cursor += size
    if cursor != len(flat):
        raise ValueError(f"{len(flat)} scores for {cursor} (sentence, sample) pairs")
    return out
