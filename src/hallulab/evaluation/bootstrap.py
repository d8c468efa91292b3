"""Percentile bootstrap over clusters (passages), all resamples at once.

Resampling B times n passages with replacement is the same as giving every passage a
multiplicity ``W[b, p]`` (how often resample b drew it). Every metric of a resample is then
a *weighted* metric of the full data, and with the scores sorted once the weighted
cumulative counts of all B resamples are one ``cumsum`` over a (B, n) matrix: no Python
loop over resamples. The draws are ``numpy.random.default_rng(seed).integers(0, n, (B, n))``,
the same stream as B successive draws of n, so the intervals equal those of a loop that
resamples and recomputes (tests check this to 1e-9).

Weighted versions of the metrics (each reduces to the unweighted one when all weights are 1):

* PR curve / AUC-PR (trapezoid) / average precision: weighted true and false positives at
  every distinct threshold; thresholds whose items all have weight 0 add zero-width steps.
* ROC-AUC: sum over tie groups of pos_g * (neg_below_g + neg_g / 2), over P * N.
* PRR: the rejection areas of the resampled multiset in closed form per tie group
  (:func:`prediction_rejection_ratio`).
* Pearson: weighted moments. Spearman: Pearson of the weighted mid-ranks (the mid-rank of a
  value in the resampled multiset is the weight below it plus (its tie weight + 1) / 2).

A resample in which a metric is undefined (one class only, constant values, no unit) gives
NaN, and the interval is taken over the defined resamples; :func:`summarise` says how many
were undefined and why an interval is null (:mod:`hallulab.evaluation.undefined`). Every
function here takes empty inputs (no unit) and returns NaN for them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hallulab.evaluation import undefined


def resample_weights(n_clusters: int, samples: int, seed: int) -> np.ndarray:
    """(samples, n_clusters) multiplicities of the clusters in each resample."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_clusters, (samples, n_clusters))
    weights = np.zeros((samples, n_clusters), dtype=np.float64)
    rows = np.repeat(np.arange(samples), n_clusters)
    np.add.at(weights, (rows, draws.ravel()), 1.0)
    return weights


@dataclass(frozen=True)
class _Sorted:
    """Items sorted by descending score, with the last index of every tie group."""

    order: np.ndarray
    ends: np.ndarray


def _descending(scores: np.ndarray) -> _Sorted:
    order = np.argsort(-scores, kind="mergesort")
    ranked = scores[order]
    distinct = np.flatnonzero(np.diff(ranked)) if len(ranked) > 1 else np.empty(0, np.int64)
    return _Sorted(order, np.r_[distinct, len(ranked) - 1])


def _weighted_counts(y: np.ndarray, scores: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(B, T) weighted true / false positives at every distinct threshold, descending
    ((B, 1) zeros when there is no unit: every metric of it is then undefined)."""
    if scores.size == 0:
        empty = np.zeros((weights.shape[0], 1))
        return empty, empty.copy()
    sort = _descending(scores)
    w = weights[:, sort.order]
    positive = y[sort.order].astype(np.float64)
    tps = np.cumsum(w * positive, axis=1)[:, sort.ends]
    fps = np.cumsum(w * (1.0 - positive), axis=1)[:, sort.ends]
    return tps, fps


def _defined(tps: np.ndarray, fps: np.ndarray) -> np.ndarray:
    """Resamples with both classes present."""
    return (tps[:, -1] > 0) & (fps[:, -1] > 0)


def _pr_points(tps: np.ndarray, fps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(precision, recall) with the (recall 0, precision 1) start, as scikit-learn draws it."""
    total = tps[:, -1:]
    with np.errstate(invalid="ignore", divide="ignore"):
        predicted = tps + fps
        precision = np.where(predicted > 0, tps / np.where(predicted > 0, predicted, 1.0), 1.0)
        recall = np.where(total > 0, tps / np.where(total > 0, total, 1.0), 0.0)
    ones = np.ones((tps.shape[0], 1))
    zeros = np.zeros((tps.shape[0], 1))
    return np.hstack([ones, precision]), np.hstack([zeros, recall])


def aucpr_trapezoid(y: np.ndarray, scores: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(B,) trapezoid AUC-PR of every weighting (NaN where undefined)."""
    tps, fps = _weighted_counts(y, scores, weights)
    precision, recall = _pr_points(tps, fps)
    area = np.sum(np.diff(recall, axis=1) * (precision[:, 1:] + precision[:, :-1]) / 2.0, axis=1)
    return np.where(_defined(tps, fps), area, np.nan)


def average_precision(y: np.ndarray, scores: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(B,) step-wise average precision of every weighting."""
    tps, fps = _weighted_counts(y, scores, weights)
    precision, recall = _pr_points(tps, fps)
    value = np.sum(np.diff(recall, axis=1) * precision[:, 1:], axis=1)
    return np.where(_defined(tps, fps), value, np.nan)


def roc_auc(y: np.ndarray, scores: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(B,) ROC-AUC with ties counted half."""
    tps, fps = _weighted_counts(y, scores, weights)
    pos_group = np.diff(np.hstack([np.zeros((tps.shape[0], 1)), tps]), axis=1)
    neg_group = np.diff(np.hstack([np.zeros((fps.shape[0], 1)), fps]), axis=1)
    # groups are in descending score order: negatives *below* a group come after it
    negatives = fps[:, -1:]
    neg_below = negatives - fps
    total = tps[:, -1] * fps[:, -1]
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.sum(pos_group * (neg_below + neg_group / 2.0), axis=1) / total
    return np.where(_defined(tps, fps), value, np.nan)


def _rejection_areas(uncertainty: np.ndarray, quality: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(B,) area under the prediction-rejection curve of every weighting
    (:func:`hallulab.evaluation.metrics.rejection_area` on the resampled multiset).

    Sorted by ascending uncertainty, tie group g holds W_g items (weights summed) of mean
    quality m_g = Q_g / W_g; with S_g items up to and including g and C_g the quality before
    it, the kept means C(j) / j over the group's positions j = S_(g-1)+1 .. S_g sum to

        (C_g - m_g S_(g-1)) (H(S_g) - H(S_(g-1))) + m_g W_g

    (H: harmonic numbers; C(j) grows by m_g per position inside the group), and the area is
    their total over S_G. Multiplicities are whole numbers, so H is a table."""
    if uncertainty.size == 0:
        return np.full(weights.shape[0], np.nan)
    order = np.argsort(uncertainty, kind="mergesort")
    ranked = uncertainty[order]
    starts = np.r_[0, np.flatnonzero(np.diff(ranked)) + 1]
    w = weights[:, order]
    group_weight = np.add.reduceat(w, starts, axis=1)
    group_quality = np.add.reduceat(w * quality[order], starts, axis=1)
    upto = np.cumsum(group_weight, axis=1)
    before = upto - group_weight
    quality_before = np.cumsum(group_quality, axis=1) - group_quality
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(group_weight > 0, group_quality / np.where(group_weight > 0, group_weight, 1.0), 0.0)
    total = upto[:, -1]
    harmonic = np.r_[0.0, np.cumsum(1.0 / np.arange(1, int(total.max()) + 1))]
    steps = harmonic[upto.astype(np.int64)] - harmonic[before.astype(np.int64)]
    summed = np.sum((quality_before - mean * before) * steps + mean * group_weight, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, summed / np.where(total > 0, total, 1.0), np.nan)


def prediction_rejection_ratio(y: np.ndarray, scores: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(B,) PRR = (A_score - A_random) / (A_oracle - A_random) of every weighting, quality
    1 - y (:func:`hallulab.evaluation.metrics.prediction_rejection_ratio`); NaN where the
    resample holds one class only."""
    positive = np.asarray(y, dtype=np.float64)
    quality = 1.0 - positive
    total = weights.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        random_area = (weights @ quality) / total
        oracle = _rejection_areas(positive, quality, weights)
        value = (_rejection_areas(np.asarray(scores, dtype=np.float64), quality, weights) - random_area) / (
            oracle - random_area
        )
    has_both = (weights @ positive > 0) & (weights @ quality > 0)
    return np.where(has_both, value, np.nan)


def _spread(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """(B,) whether the items present in each resample hold two distinct values (exactly)."""
    values = np.broadcast_to(values, present.shape)
    high = np.where(present, values, -np.inf).max(axis=1)
    low = np.where(present, values, np.inf).min(axis=1)
    return high > low


def weighted_pearson(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(B,) Pearson correlation of x and y (per-item arrays or (B, n) matrices) under each weighting;
    NaN where either side is constant among the drawn items (decided exactly, not by a variance
    that rounding can leave slightly above zero)."""
    if weights.shape[1] == 0:
        return np.full(weights.shape[0], np.nan)
    present = weights > 0
    spread = _spread(x, present) & _spread(y, present)
    total = np.maximum(weights.sum(axis=1, keepdims=True), 1.0)  # 0 only where nothing is drawn: no spread
    mean_x = (weights * x).sum(axis=1, keepdims=True) / total
    mean_y = (weights * y).sum(axis=1, keepdims=True) / total
    dx, dy = x - mean_x, y - mean_y
    covariance = (weights * dx * dy).sum(axis=1)
    variance = (weights * dx * dx).sum(axis=1) * (weights * dy * dy).sum(axis=1)
    defined = spread & (variance > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(defined, covariance / np.sqrt(np.where(defined, variance, 1.0)), np.nan)


def weighted_midranks(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(B, n) mid-rank of every item within each weighted multiset (1-based, ties averaged)."""
    order = np.argsort(values, kind="mergesort")
    ranked = values[order]
    starts = np.r_[0, np.flatnonzero(np.diff(ranked)) + 1] if len(ranked) else np.empty(0, np.int64)
    group_of = np.zeros(len(values), dtype=np.int64)
    group_of[order] = np.cumsum(np.isin(np.arange(len(ranked)), starts)) - 1
    group_weight = np.zeros((weights.shape[0], len(starts)))
    np.add.at(group_weight.T, group_of, weights.T)
    below = np.cumsum(group_weight, axis=1) - group_weight
    rank = below + (group_weight + 1.0) / 2.0
    return rank[:, group_of]


def weighted_spearman(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    return weighted_pearson(weighted_midranks(x, weights), weighted_midranks(y, weights), weights)


def percentile_interval(draws: np.ndarray, level: float) -> tuple[float, float]:
    """The central ``level`` interval of the defined draws (NaN, NaN when none is defined)."""
    finite = draws[~np.isnan(draws)]
    if finite.size == 0:
        return float("nan"), float("nan")
    alpha = (1.0 - level) / 2.0
    return float(np.quantile(finite, alpha)), float(np.quantile(finite, 1.0 - alpha))


@dataclass(frozen=True)
class Interval:
    """A percentile interval, the number of resamples it left out, and why it is null if it is."""

    low: float
    high: float
    undefined_resamples: int
    reason: str | None

    def bounds(self) -> list[float]:
        return [self.low, self.high]


def summarise(draws: np.ndarray, level: float, point_reason: str | None, clusters: int) -> Interval:
    """The interval of one metric's draws: null (NaN bounds, a reason) when the point estimate is
    undefined, when every unit comes from one record, or when no resample defines the metric."""
    defined = int(np.count_nonzero(~np.isnan(draws)))
    reason = undefined.interval(point_reason, clusters, defined)
    if reason is not None:
        return Interval(float("nan"), float("nan"), len(draws) - defined, reason)
    low, high = percentile_interval(draws, level)
    return Interval(low, high, len(draws) - defined, None)
