"""The chosen samples of each record with their NLI pair matrix: what the aggregate steps of the
graph-based uncertainty estimators (Lin, Trivedi and Sun, 2023, §3) read. N and the choice of
samples come from ``samples`` (:mod:`hallulab.methods.sample_matrix`), so a sweep over them
calls no model: the chosen samples' matrix is the stored one's sub-matrix at their indices."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hallulab.artifacts.nli_pair_matrix import PairMatrix, pair_matrices
from hallulab.core.units import ScoreTable
from hallulab.methods.sample_matrix import sample_choice_from, selected_columns
from hallulab.methods.similarity_graph import similarity_matrix
from hallulab.pipeline.context import AggregateContext, Aggregated


@dataclass(frozen=True)
class ChosenSamples:
    """One record's chosen samples and their NLI pair matrix."""

    record_id: str
    texts: tuple[str, ...]
    pairs: PairMatrix


@dataclass(frozen=True)
class ChosenRecords:
    """The records with two chosen samples or more, and how many were left out."""

    records: tuple[ChosenSamples, ...]
    without_pair_matrix: int  # fewer than two stored samples: not in the artifact
    with_fewer_than_two_chosen: int
    num_samples: int | None


def chosen_records(ctx: AggregateContext[None]) -> ChosenRecords:
    """The chosen samples of every record the ``nli_pair_matrix`` artifact holds."""
    selection = sample_choice_from(ctx.params)
    stored = pair_matrices(ctx.artifacts["nli_pair_matrix"])
    chosen = []
    missing = fewer = 0
    for record in ctx.records:
        pairs = stored.get(record.id)
        if pairs is None:
            missing += 1
            continue
        if pairs.size != len(record.samples):
            raise ValueError(
                f"nli_pair_matrix: record {record.id!r} holds {pairs.size} samples, not {len(record.samples)}"
            )
        columns = selected_columns(record.id, pairs.size, selection)
        if len(columns) < 2:
            fewer += 1
            continue
        texts = tuple(record.samples[int(i)] for i in columns)
        chosen.append(ChosenSamples(record.id, texts, pairs.chosen(columns)))
    return ChosenRecords(tuple(chosen), missing, fewer, selection.used)


RecordScore = Callable[[ChosenSamples], float]


def similarity_variants(
    prefix: str, similarities: Sequence[str], measure: Callable[[np.ndarray], float]
) -> dict[str, RecordScore]:
    """``<prefix>_<similarity>`` -> ``measure`` of that similarity's graph weights, per similarity."""

    def variant(similarity: str) -> RecordScore:
        return lambda record: measure(similarity_matrix(record.pairs, record.texts, similarity))

    return {f"{prefix}_{similarity}": variant(similarity) for similarity in similarities}


def response_scores(ctx: AggregateContext[None], variants: dict[str, RecordScore], extra: dict[str, Any]) -> Aggregated:
    """Each variant's response score of every chosen record, and the diagnostics (``extra`` added)."""
    chosen = chosen_records(ctx)
    table = ScoreTable()
    for record in chosen.records:
        for variant, score in variants.items():
            table.add_response(variant, record.record_id, score(record))
    diagnostics = {
        "records_scored": len(chosen.records),
        "records_without_pair_matrix": chosen.without_pair_matrix,
        "records_with_fewer_than_two_chosen_samples": chosen.with_fewer_than_two_chosen,
        "num_samples": chosen.num_samples,
        "nli": ctx.artifacts["nli_pair_matrix"].get("nli", {}).get("name"),
        **extra,
    }
    return Aggregated(table.frame(), diagnostics)
