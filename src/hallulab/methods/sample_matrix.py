"""Sentence x sample score matrices: the stored output of the expensive SelfCheckGPT variants.

NLI, BERTScore and Prompt all score every sentence r_i of a response against every stored
sample S_n, giving an I x N_max matrix per passage; the paper's sentence score is the mean
over N samples of that row (§5.1 Eq. 2, §5.4 Eq. 10, §5.5), and the passage score is the
mean of the sentence scores (§7.2). The score stages store the whole matrix once; the
aggregate stage reads the sweep knobs (how many samples N, which ones, how to aggregate)
and is pure arithmetic, so `-S samples.used=...` re-runs no model call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pandas as pd

from hallulab.core.config import ConfigError, setting, typed
from hallulab.core.errors import RecordError, StaleScoresError
from hallulab.core.units import ScoreTable, concat
from hallulab.data.schema import Passage
from hallulab.methods.skipped import HAS_RESPONSE, HAS_SAMPLES, Partition, partition
from hallulab.pipeline.context import AggregateContext, Aggregated
from hallulab.pipeline.params import ParamsView

SELECTIONS = ("first", "random")
AGGREGATIONS = ("mean", "median", "max")


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
class SampleSelection:
    """``samples`` knobs read by the cheap aggregate stages: N, which N, and how their scores combine."""

    used: int | None = setting(None, minimum=1, doc="N; null = every stored sample")
    selection: str = setting("first", choices=SELECTIONS, doc="the first N samples, or a seeded random N")
    aggregation: str = setting("mean", choices=AGGREGATIONS, doc="over the N samples; SelfCheckGPT: mean")
    seed: int = 0

    def __post_init__(self) -> None:
        if self.selection not in SELECTIONS:
            raise ConfigError(f"samples.selection: {self.selection!r} is not one of {list(SELECTIONS)}")
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"samples.aggregation: {self.aggregation!r} is not one of {list(AGGREGATIONS)}")
        if self.used is not None and self.used < 1:
            raise ConfigError(f"samples.used: must be >= 1, got {self.used}")


#: The params keys of :class:`SampleSelection` (what an aggregate step over samples declares).
SELECTION_PARAMS = tuple(f"samples.{f.name}" for f in fields(SampleSelection))


def selected_columns(passage_id: str, available: int, selection: SampleSelection) -> np.ndarray:
    """Indices of the samples used for one passage."""
    wanted = available if selection.used is None else selection.used
    if wanted > available:
        raise ConfigError(f"samples.used: N={wanted} asked for, record {passage_id!r} stores {available} samples")
    if selection.selection == "first":
        return np.arange(wanted)
    seed = np.random.SeedSequence([selection.seed, *passage_id.encode("utf-8")])
    return np.sort(np.random.default_rng(seed).choice(available, size=wanted, replace=False))


def sentence_scores(matrix: np.ndarray, columns: np.ndarray, aggregation: str = "mean") -> np.ndarray:
    """Aggregate each row over the chosen samples (paper: the mean)."""
    chosen = matrix[:, columns]
    if chosen.shape[1] == 0:
        raise ValueError("at least one sample is needed")
    if aggregation == "mean":
        return chosen.mean(axis=1)
    if aggregation == "median":
        return np.median(chosen, axis=1)
    return chosen.max(axis=1)


def aggregate(stored: SampleMatrices, selection: SampleSelection) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Sentence scores (row aggregate over N samples) and response scores (mean over the
    sentences, §7.2) as unit-score rows, and the diagnostics."""
    table = ScoreTable()
    for pid, matrix in stored.matrices.items():
        if matrix.shape[0] == 0:
            raise ValueError(f"passage {pid!r}: no sentences in the stored matrix")
        scores = sentence_scores(matrix, selected_columns(pid, matrix.shape[1], selection), selection.aggregation)
        table.add_sentences(stored.variant, pid, scores.tolist())
        table.add_response(stored.variant, pid, float(scores.mean()))
    diagnostics = {
        **stored.diagnostics,
        "identity": dict(stored.identity),
        "selection": {
            "num_samples": selection.used,
            "selection": selection.selection,
            "aggregation": selection.aggregation,
            "seed": selection.seed,
        },
    }
    return table.frame(), diagnostics


def sentence_sample_grid(passages: Sequence[Passage], method: str) -> tuple[list[str], list[str]]:
    """Flattened (sentence, sample) pairs of every passage, sentence-major: the inputs of one
    batched request for the whole data set."""
    sentences: list[str] = []
    samples: list[str] = []
    for passage in passages:
        if not passage.samples:
            raise RecordError(passage.id, "samples", f"{method} needs at least one sample")
        for sentence in passage.sentences:
            sentences.extend([sentence] * len(passage.samples))
            samples.extend(passage.samples)
    return sentences, samples


def unflatten(passages: Sequence[Passage], flat: np.ndarray) -> dict[str, np.ndarray]:
    """Inverse of :func:`sentence_sample_grid`: each passage's I x N_max matrix."""
    out: dict[str, np.ndarray] = {}
    cursor = 0
    for passage in passages:
        size = len(passage.sentences) * len(passage.samples)
        out[passage.id] = flat[cursor : cursor + size].reshape(len(passage.sentences), len(passage.samples))
        cursor += size
    if cursor != len(flat):
        raise ValueError(f"{len(flat)} scores for {cursor} (sentence, sample) pairs")
    return out


#: The keys that choose which stored samples a method uses (no aggregation over them): what the
#: methods that pool the chosen samples declare (n-gram's model, FactSelfCheck's frequencies).
SAMPLE_CHOICE_PARAMS = ("samples.used", "samples.selection", "samples.seed")


def sample_choice_from(params: ParamsView) -> SampleSelection:
    """N, first or random, and the seed (:data:`SAMPLE_CHOICE_PARAMS` must be declared): the one
    reading of N for every method over samples; :func:`selected_columns` applies it."""
    values = {key.split(".", 1)[1]: params.get(key) for key in SAMPLE_CHOICE_PARAMS}
    return typed(SampleSelection, values, "samples")


def selection_from(params: ParamsView) -> SampleSelection:
    """The ``samples`` sweep knobs, checked (:data:`SELECTION_PARAMS` must be declared)."""
    values = {key.split(".", 1)[1]: params.get(key) for key in SELECTION_PARAMS}
    return typed(SampleSelection, values, "samples")


def scorable(passages: Sequence[Passage]) -> Partition:
    """The records a sample-based method can score (a response and at least one sample), and
    the others with their reason (prompt-only records: no response; no samples)."""
    return partition(passages, HAS_RESPONSE, HAS_SAMPLES)


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


def aggregate_step(ctx: AggregateContext[SampleMatrixScores]) -> Aggregated:
    """The aggregate step of every sample-matrix variant (NLI, BERTScore, Prompt)."""
    selection = selection_from(ctx.params)
    frames: list[pd.DataFrame] = []
    diagnostics: dict[str, Any] = {}
    for stored in ctx.raw.variants:
        frame, found = aggregate(stored, selection)
        frames.append(frame)
        diagnostics = {**found, **diagnostics} if diagnostics else found
    return Aggregated(concat(frames), diagnostics)
