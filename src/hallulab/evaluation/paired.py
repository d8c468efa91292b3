"""Paired bootstrap differences: is variant A better than variant B on the same units?

Two variants' intervals that overlap do not say that neither is better: their metrics move
together across resamples, because both score the same units. The paired interval takes the
difference of the two metrics *within* each resample (the same records drawn for both, by
the evaluation's own seeded multiplicities, :mod:`hallulab.evaluation.bootstrap`):

    delta_b = M(A on resample b) - M(B on resample b),   interval = percentiles of delta_b

over the records both variants scored. An interval above 0 says A beats B at the
evaluation's confidence level; one that holds 0 says the data cannot tell them apart.

A combining method writes its members' own scores as variants named ``member.<method>.<variant>``
(:mod:`hallulab.methods.ensemble`); the evaluation then reports every other variant of
that method against each member (:func:`against_members`), in ``.info.json`` under ``paired``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from hallulab.core.units import MEMBER_PREFIX, level_rows, sentence_scores, variants
from hallulab.data.schema import Record
from hallulab.evaluation import bootstrap
from hallulab.evaluation.levels import (
    LEVEL_METRICS,
    Units,
    binary_draws,
    binary_metrics,
    passage_scores,
    unit_labels,
    units_of,
)
from hallulab.evaluation.protocol import LabelledScores, ProtocolKnobs, align, bootstrap_draws, compute_metrics


@dataclass(frozen=True)
class Difference:
    """A - B at the point estimate and its paired percentile interval (NaN where undefined)."""

    point: float
    low: float
    high: float
    records: int  # the records both variants scored (the resampled clusters)

    def to_list(self) -> list[float | None]:
        return [None if np.isnan(v) else round(float(v), 4) for v in (self.point, self.low, self.high)]


def _differences(
    points_a: Mapping[str, float],
    points_b: Mapping[str, float],
    draws_a: Mapping[str, np.ndarray],
    draws_b: Mapping[str, np.ndarray],
    cfg: ProtocolKnobs,
    records: int,
) -> dict[str, Difference]:
    """A - B for every metric with draws: the point difference and the percentiles of the
    per-resample differences."""
    found = {}
    for key, draws in draws_a.items():
        with np.errstate(invalid="ignore"):
            low, high = bootstrap.percentile_interval(draws - draws_b[key], cfg.ci_level)
        found[key] = Difference(points_a[key] - points_b[key], low, high, records)
    return found


def _sentence_level(
    records: Sequence[Record], frame: pd.DataFrame, a: str, b: str, cfg: ProtocolKnobs
) -> dict[str, Difference]:
    scores_a, scores_b = sentence_scores(frame, a), sentence_scores(frame, b)
    common = [p for p in records if p.labels is not None and p.id in scores_a and p.id in scores_b]
    if not common:
        return {}

    def labelled(variant: str, by_record: Mapping[str, list[float]]) -> LabelledScores:
        return align(common, by_record, passage_scores(frame, variant, by_record), variant)

    data_a, data_b = labelled(a, scores_a), labelled(b, scores_b)
    points_a, points_b = compute_metrics(data_a, cfg), compute_metrics(data_b, cfg)
    weights = bootstrap.resample_weights(len(common), cfg.bootstrap_samples, cfg.seed)
    draws_a, draws_b = bootstrap_draws(data_a, cfg, weights), bootstrap_draws(data_b, cfg, weights)
    return _differences(points_a, points_b, draws_a, draws_b, cfg, len(common))


def _binary_level(
    records: Sequence[Record], frame: pd.DataFrame, level: str, a: str, b: str, cfg: ProtocolKnobs
) -> dict[str, Difference]:
    truth = unit_labels(records, level)
    rows_a, rows_b = level_rows(frame, a, level), level_rows(frame, b, level)
    keys_b = set(zip(rows_b["record_id"], rows_b["unit_index"].astype(int), strict=True))
    keys = [k for k in zip(rows_a["record_id"], rows_a["unit_index"].astype(int), strict=True) if k in keys_b]
    units_a: Units = units_of(truth, rows_a, set(keys))
    units_b: Units = units_of(truth, rows_b, set(keys))
    if len(units_a.scores) == 0:
        return {}
    names, owner = np.unique(units_a.clusters, return_inverse=True)
    weights = bootstrap.resample_weights(len(names), cfg.bootstrap_samples, cfg.seed)[:, owner]
    points_a = {key: value for key, (value, _) in binary_metrics(level, units_a, None).items()}
    points_b = {key: value for key, (value, _) in binary_metrics(level, units_b, None).items()}
    draws_a, draws_b = binary_draws(level, units_a, weights), binary_draws(level, units_b, weights)
    return _differences(points_a, points_b, draws_a, draws_b, cfg, len(names))


def paired_difference(
    records: Sequence[Record], frame: pd.DataFrame, level: str, a: str, b: str, cfg: ProtocolKnobs
) -> dict[str, Difference]:
    """metric -> A - B on the units both scored at ``level`` (empty: no common labelled unit)."""
    if cfg.bootstrap_samples <= 0:
        return {}
    if level == "sentence":
        return _sentence_level(records, frame, a, b, cfg)
    if level not in LEVEL_METRICS:
        raise ValueError(f"no paired metrics at level {level!r}")
    return _binary_level(records, frame, level, a, b, cfg)


def against_members(
    records: Sequence[Record], frame: pd.DataFrame, cfg: ProtocolKnobs
) -> dict[str, dict[str, dict[str, dict[str, list[float | None]]]]]:
    """level -> variant -> member variant -> metric -> [A - B, low, high], for every variant
    of a combining method against each of its ``member.*`` variants (empty without members)."""
    found: dict[str, dict[str, dict[str, dict[str, list[float | None]]]]] = {}
    for level in ("sentence", *LEVEL_METRICS):
        rows = frame[frame["level"] == level]
        names = variants(rows)
        members = [v for v in names if v.startswith(MEMBER_PREFIX)]
        for variant in (v for v in names if not v.startswith(MEMBER_PREFIX)):
            for member in members:
                differences = paired_difference(records, frame, level, variant, member, cfg)
                if differences:
                    by_metric = {key: d.to_list() for key, d in differences.items()}
                    found.setdefault(level, {}).setdefault(variant, {})[member] = by_metric
    return found
