"""Sentence x sample score matrices: the stored output of the expensive SelfCheckGPT variants.

NLI, BERTScore and Prompt all score every sentence r_i of a response against every stored
sample S_n, giving an I x N_max matrix per passage; the paper's sentence score is the mean
over N samples of that row (§5.1 Eq. 2, §5.4 Eq. 10, §5.5), and the passage score is the
mean of the sentence scores (§7.2). The score stages store the whole matrix once; the
aggregate stage reads the sweep knobs (how many samples N, which ones, how to aggregate)
and is pure arithmetic, so `-S samples.used=...` re-runs no model call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from hallulab.core.config import ConfigError, typed
from hallulab.core.units import ScoreTable, concat
from hallulab.data.schema import Record
from hallulab.methods.sample_scores import SampleMatrices, SampleMatrixScores
from hallulab.methods.sample_selection import (
    SAMPLE_CHOICE_PARAMS,
    SELECTION_PARAMS,
    SampleKnobs,
)
from hallulab.methods.skipped import HAS_RESPONSE, HAS_SAMPLES, Partition, partition
from hallulab.pipeline.context import AggregateContext, Aggregated
from hallulab.pipeline.params import ParamsView


def selected_columns(passage_id: str, available: int, selection: SampleKnobs) -> np.ndarray:
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


def aggregate(stored: SampleMatrices, selection: SampleKnobs) -> tuple[pd.DataFrame, dict[str, Any]]:
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


def sample_choice_from(params: ParamsView) -> SampleKnobs:
    """N, first or random, and the seed (:data:`SAMPLE_CHOICE_PARAMS` must be declared): the one
    reading of N for every method over samples; :func:`selected_columns` applies it."""
    values = {key.split(".", 1)[1]: params.get(key) for key in SAMPLE_CHOICE_PARAMS}
    return typed(SampleKnobs, values, "samples")


def selection_from(params: ParamsView) -> SampleKnobs:
    """The ``samples`` sweep knobs, checked (:data:`SELECTION_PARAMS` must be declared)."""
    values = {key.split(".", 1)[1]: params.get(key) for key in SELECTION_PARAMS}
    return typed(SampleKnobs, values, "samples")


def scorable(records: Sequence[Record]) -> Partition:
    """The records a sample-based method can score (a response and at least one sample), and
    the others with their reason (prompt-only records: no response; no samples)."""
    return partition(records, HAS_RESPONSE, HAS_SAMPLES)


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
