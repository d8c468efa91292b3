"""Ranking metrics, vectorised so that bootstrap resampling stays cheap.

* :func:`pr_curve` / :func:`aucpr_trapezoid` reproduce scikit-learn's
  ``precision_recall_curve`` followed by ``auc(recall, precision)`` (the trapezoid rule),
  which is how SelfCheckGPT's and FactSelfCheck's notebooks compute AUC-PR
  (selfcheckgpt and FactSelfCheck). This is *not* average precision.
* :func:`average_precision` reproduces ``average_precision_score``
  (sum over thresholds of (R_k - R_{k-1}) P_k), the "PR-AUC" of lm-polygraph.
* :func:`roc_auc` is the Mann-Whitney statistic with mid-ranks for ties, equal to
  ``roc_auc_score``.

The point estimates are the resampling formulas of :mod:`hallulab.evaluation.bootstrap`
with every weight 1: one implementation of each metric serves both.

Tests pin each one to scikit-learn on random inputs with ties.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hallulab.evaluation import bootstrap


@dataclass(frozen=True)
class PRCurve:
    """Points of a PR curve in order of decreasing threshold, starting at (recall 0, precision 1)."""

    precision: np.ndarray
    recall: np.ndarray


def _cumulative_counts(y_true: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(-scores, kind="mergesort")
    sorted_scores = scores[order]
    sorted_true = y_true[order].astype(np.float64)
    # the last index of every run of equal scores is a threshold
    distinct = np.flatnonzero(np.diff(sorted_scores)) if len(scores) > 1 else np.empty(0, np.int64)
    threshold_idx = np.r_[distinct, len(scores) - 1]
    tps = np.cumsum(sorted_true)[threshold_idx]
    fps = 1 + threshold_idx - tps
    return tps, fps


def _check(y_true: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y_true).astype(bool)
    s = np.asarray(scores, dtype=np.float64)
    if y.shape != s.shape or y.ndim != 1:
        raise ValueError(f"labels and scores must be 1-D of equal length, got {y.shape} and {s.shape}")
    if np.isnan(s).any():
        raise ValueError("scores contain NaN")
    return y, s


def pr_curve(y_true: np.ndarray, scores: np.ndarray) -> PRCurve:
    """Precision and recall at every distinct threshold, as scikit-learn computes them."""
    y, s = _check(y_true, scores)
    tps, fps = _cumulative_counts(y, s)
    if tps[-1] == 0:
        raise ValueError("no positive labels: PR curve undefined")
    precision = tps / (tps + fps)
    recall = tps / tps[-1]
    return PRCurve(precision=np.r_[1.0, precision], recall=np.r_[0.0, recall])


def _unit(values: np.ndarray) -> np.ndarray:
    return np.ones((1, len(values)))


def aucpr_trapezoid(y_true: np.ndarray, scores: np.ndarray) -> float:
    """Area under the PR curve by the trapezoid rule (``auc(recall, precision)``): the
    resampling formula of :mod:`hallulab.evaluation.bootstrap` with every weight 1."""
    y, s = _check(y_true, scores)
    if not y.any():
        raise ValueError("no positive labels: PR curve undefined")
    # every unit positive: precision 1 at every recall, area 1 (the resampling form calls it undefined)
    return float(bootstrap.aucpr_trapezoid(y, s, _unit(s))[0]) if (~y).any() else 1.0


def average_precision(y_true: np.ndarray, scores: np.ndarray) -> float:
    """Step-wise average precision (``average_precision_score``), as :func:`aucpr_trapezoid`."""
    y, s = _check(y_true, scores)
    if not y.any():
        raise ValueError("no positive labels: PR curve undefined")
    return float(bootstrap.average_precision(y, s, _unit(s))[0]) if (~y).any() else 1.0


def roc_auc(y_true: np.ndarray, scores: np.ndarray) -> float:
    """Area under the ROC curve (probability a positive outranks a negative, ties count half)."""
    y, s = _check(y_true, scores)
    if y.all() or not y.any():
        raise ValueError("ROC-AUC needs both classes")
    return float(bootstrap.roc_auc(y, s, _unit(s))[0])


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r; NaN when either side has fewer than two distinct values."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return float(bootstrap.weighted_pearson(x, y, _unit(x))[0])


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho: Pearson correlation of mid-ranks (equal to ``scipy.stats.spearmanr``)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return float(bootstrap.weighted_spearman(x, y, _unit(x))[0])


def rejection_area(uncertainty: np.ndarray, quality: np.ndarray) -> float:
    """Area under the prediction-rejection curve: mean quality of the kept items after
    rejecting the k most uncertain ones, averaged over k = 0 .. n - 1 (lm-polygraph's
    ``PredictionRejectionArea`` with ``max_rejection = 1``). Tied uncertainties are broken at
    random in expectation (each item of a tie group counts its group's mean quality), so a
    constant score gets the random area exactly."""
    values = np.asarray(uncertainty, dtype=np.float64)
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    sorted_quality = np.asarray(quality, dtype=np.float64)[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_values)) + 1] if len(values) else np.empty(0, np.int64)
    sums = np.add.reduceat(sorted_quality, starts) if len(values) else np.empty(0)
    sizes = np.diff(np.r_[starts, len(values)])
    expected = np.repeat(sums / np.maximum(sizes, 1), sizes)
    kept_means = np.cumsum(expected) / np.arange(1, len(expected) + 1)
    return float(kept_means.mean())


def prediction_rejection_ratio(y_true: np.ndarray, scores: np.ndarray) -> float:
    """PRR = (A_score - A_random) / (A_oracle - A_random) with quality = 1 - label
    (a hallucinated unit has quality 0): 1 for a perfect ranking, 0 for a random one."""
    y, s = _check(y_true, scores)
    quality = 1.0 - y.astype(np.float64)
    random_area = float(quality.mean())
    oracle_area = rejection_area(y.astype(np.float64), quality)
    if oracle_area == random_area:
        return float("nan")
    return (rejection_area(s, quality) - random_area) / (oracle_area - random_area)


def f1_score(truth: np.ndarray, decided: np.ndarray) -> float:
    """F1 of boolean decisions against boolean truth (NaN with no positive label or decision)."""
    truth, decided = np.asarray(truth, dtype=bool), np.asarray(decided, dtype=bool)
    tp = float((decided & truth).sum())
    wrong = float((decided != truth).sum())
    return 2 * tp / (2 * tp + wrong) if (2 * tp + wrong) > 0 else float("nan")
