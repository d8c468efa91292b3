"""Ranking metrics, vectorised so that bootstrap resampling stays cheap.

* :func:`pr_curve` / :func:`aucpr_trapezoid` reproduce scikit-learn's
  ``precision_recall_curve`` followed by ``auc(recall, precision)`` (the trapezoid rule),
  which is how SelfCheckGPT's and FactSelfCheck's notebooks compute AUC-PR
  (REFERENCE.md §1, §3). This is *not* average precision.
* :func:`average_precision` reproduces ``average_precision_score``
  (sum over thresholds of (R_k - R_{k-1}) P_k), the "PR-AUC" of lm-polygraph.
* :func:`roc_auc` is the Mann-Whitney statistic with mid-ranks for ties, equal to
  ``roc_auc_score``.

Tests pin each one to scikit-learn on random inputs with ties.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata


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


def aucpr_trapezoid(y_true: np.ndarray, scores: np.ndarray) -> float:
    """Area under the PR curve by the trapezoid rule (``auc(recall, precision)``)."""
    curve = pr_curve(y_true, scores)
    return float(np.sum(np.diff(curve.recall) * (curve.precision[1:] + curve.precision[:-1]) / 2.0))


def average_precision(y_true: np.ndarray, scores: np.ndarray) -> float:
    """Step-wise average precision (``average_precision_score``)."""
    curve = pr_curve(y_true, scores)
    return float(np.sum(np.diff(curve.recall) * curve.precision[1:]))


def roc_auc(y_true: np.ndarray, scores: np.ndarray) -> float:
    """Area under the ROC curve (probability a positive outranks a negative, ties count half)."""
    y, s = _check(y_true, scores)
    positives = int(y.sum())
    negatives = len(y) - positives
    if positives == 0 or negatives == 0:
        raise ValueError("ROC-AUC needs both classes")
    ranks = rankdata(s)
    return float((ranks[y].sum() - positives * (positives + 1) / 2.0) / (positives * negatives))


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    xc = x - x.mean()
    yc = y - y.mean()
    denominator = np.sqrt((xc * xc).sum() * (yc * yc).sum())
    return float((xc * yc).sum() / denominator) if denominator > 0 else float("nan")


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho: Pearson correlation of mid-ranks (``scipy.stats.spearmanr``)."""
    return pearson(rankdata(x), rankdata(y))
