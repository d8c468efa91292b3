"""The same protocol in every cell: ROC-AUC, PR-AUC and PRR with intervals, and paired comparisons.

For one variant's labelled units in a cell (:class:`hallulab.benchmark.units.CellUnits`,
hallucinated class positive):

* **ROC-AUC**, ties counted half;
* **PR-AUC** as average precision, sum_k (R_k - R_(k-1)) P_k (scikit-learn's and lm-polygraph's
  definition), whose random value is the positive rate;
* **PRR**, the prediction-rejection ratio as lm-polygraph reports it,
  (A_score - A_random) / (A_oracle - A_random) over the rejection curve of quality 1 - label:
  100 for a perfect ranking, 0 for a random one (:func:`hallulab.evaluation.metrics.prediction_rejection_ratio`).

Each in percent with its 95% percentile bootstrap interval over records (a record's units move
together), B = 1,000 seeded resamples: the evaluation protocol's settings
(:class:`hallulab.evaluation.protocol.ProtocolKnobs`, :mod:`hallulab.evaluation.bootstrap`).

**Paired comparison.** Two variants in one column score the same records where their runs
overlap (a cell that calls an LLM runs on a subset, one that calls none on the whole set). Their
difference is taken within each resample of the records both scored,

    delta_b = M(A on resample b) - M(B on resample b),

and its percentile interval says whether A is better (interval above 0), worse (below 0) or not
told apart from B (it holds 0): :mod:`hallulab.evaluation.paired`'s rule, here across methods.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from hallulab.benchmark.units import CellUnits
from hallulab.core.config import ConfigError
from hallulab.evaluation import bootstrap
from hallulab.evaluation.protocol import ProtocolKnobs

#: metric -> its weighted form over (B, units) multiplicities (percent = 100 x)
METRICS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "roc_auc": bootstrap.roc_auc,
    "pr_auc": bootstrap.average_precision,
    "prr": bootstrap.prediction_rejection_ratio,
}
METRIC_TITLES = {"roc_auc": "ROC-AUC", "pr_auc": "PR-AUC", "prr": "PRR"}


def _rounded(value: float) -> float | None:
    return None if math.isnan(value) else round(float(value), 4)


@dataclass(frozen=True)
class Estimate:
    """A value and its interval (the table's in percent, a calibration's as they are); None where
    undefined (one class only, one record)."""

    point: float | None
    low: float | None
    high: float | None

    def to_list(self) -> list[float | None]:
        return [self.point, self.low, self.high]


def _estimate(point: float, draws: np.ndarray, level: float, records: int) -> Estimate:
    if math.isnan(point):
        return Estimate(None, None, None)
    if records < 2:
        return Estimate(_rounded(point), None, None)
    low, high = bootstrap.percentile_interval(draws, level)
    return Estimate(_rounded(point), _rounded(low), _rounded(high))


def _weights(records: tuple[str, ...], cfg: ProtocolKnobs) -> tuple[np.ndarray, int]:
    """(B, units) multiplicities resampling the records, and how many records there are."""
    names, owner = np.unique(np.asarray(records, dtype=object), return_inverse=True)
    return bootstrap.resample_weights(len(names), cfg.bootstrap_samples, cfg.seed)[:, owner], len(names)


def _points_and_draws(units: CellUnits, weights: np.ndarray) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    ones = np.ones((1, len(units.scores)))
    points = {name: 100.0 * float(metric(units.positive, units.scores, ones)[0]) for name, metric in METRICS.items()}
    draws = {name: 100.0 * metric(units.positive, units.scores, weights) for name, metric in METRICS.items()}
    return points, draws


@dataclass(frozen=True)
class CellStatistics:
    """One variant in one cell: its unit counts and the three metrics with intervals."""

    level: str
    units: int
    records: int
    positives: int
    metrics: dict[str, Estimate]


def cell_statistics(units: CellUnits, cfg: ProtocolKnobs) -> CellStatistics:
    if not units.records:
        return CellStatistics(units.level, 0, 0, 0, {name: Estimate(None, None, None) for name in METRICS})
    weights, records = _weights(units.records, cfg)
    points, draws = _points_and_draws(units, weights)
    return CellStatistics(
        units.level,
        len(units.scores),
        records,
        int(units.positive.sum()),
        {name: _estimate(points[name], draws[name], cfg.ci_level, records) for name in METRICS},
    )


def estimate(
    units: CellUnits, weighted: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray], cfg: ProtocolKnobs
) -> Estimate:
    """One more metric of a cell, in percent (``weighted``: its form over (B, units)
    multiplicities, as :data:`METRICS`), with its interval from the resamples of the records
    :func:`cell_statistics` draws."""
    if not units.records:
        return Estimate(None, None, None)
    weights, records = _weights(units.records, cfg)
    point = 100.0 * float(weighted(units.positive, units.scores, np.ones((1, len(units.scores))))[0])
    return _estimate(point, 100.0 * weighted(units.positive, units.scores, weights), cfg.ci_level, records)


@dataclass(frozen=True)
class Comparison:
    """A - B on the units both scored: per metric the difference and its paired interval."""

    units: int
    records: int
    differences: dict[str, Estimate]

    def verdict(self, metric: str) -> str:
        """``better`` / ``worse`` when the interval excludes 0, ``tied`` when it holds it,
        ``undefined`` when there is none."""
        found = self.differences[metric]
        if found.low is None or found.high is None:
            return "undefined"
        if found.low > 0:
            return "better"
        if found.high < 0:
            return "worse"
        return "tied"


def paired(a: CellUnits, b: CellUnits, cfg: ProtocolKnobs) -> Comparison:
    """A - B over the (record, unit) keys both scored, on the same resamples of their records."""
    in_b = set(b.keys)
    common = [key for key in a.keys if key in in_b]
    first, second = a.restricted_to(common), b.restricted_to(common)
    if not common:
        return Comparison(0, 0, {name: Estimate(None, None, None) for name in METRICS})
    if not np.array_equal(first.positive, second.positive):
        raise ConfigError(
            f"{a.variant} and {b.variant}: the same units carry different labels (a units file made "
            "with other labels: run the older cell again)"
        )
    weights, records = _weights(first.records, cfg)
    points_a, draws_a = _points_and_draws(first, weights)
    points_b, draws_b = _points_and_draws(second, weights)
    differences = {}
    for name in METRICS:
        with np.errstate(invalid="ignore"):
            differences[name] = _estimate(
                points_a[name] - points_b[name], draws_a[name] - draws_b[name], cfg.ci_level, records
            )
    return Comparison(len(common), records, differences)
