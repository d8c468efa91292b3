"""How well probabilities fit labels, and how a threshold on them decides, with intervals.

Each figure is computed over (B, units) multiplicities, one row per bootstrap resample of the
records (a record's units move together; :func:`hallulab.evaluation.bootstrap.resample_weights`),
row 0 of a point estimate being all ones:

* **Brier score** = sum_i w_i (p_i - y_i)^2 / sum_i w_i (Brier, 1950); lower is better;
* **ECE**, the expected calibration error over ``bins`` equal-width bins of p (Naeini et al.,
  2015): sum_b (W_b / W) |mean_w(y in b) - mean_w(p in b)|, the last bin closed on the right;
* **precision, recall, F1** of the flag ``p >= threshold``, the hallucinated class positive.
"""

from __future__ import annotations

import numpy as np

#: the ECE's bins (equal width over [0, 1]), stated with every figure
ECE_BINS = 10


def brier(probability: np.ndarray, positive: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """One Brier score per row of ``weights``."""
    error = (np.asarray(probability, dtype=np.float64) - np.asarray(positive, dtype=np.float64)) ** 2
    return np.asarray((weights * error).sum(axis=1) / weights.sum(axis=1))


def expected_calibration_error(
    probability: np.ndarray, positive: np.ndarray, weights: np.ndarray, bins: int = ECE_BINS
) -> np.ndarray:
    """One ECE per row of ``weights`` (``bins`` equal-width bins)."""
    p = np.asarray(probability, dtype=np.float64)
    y = np.asarray(positive, dtype=np.float64)
    index = np.minimum((p * bins).astype(int), bins - 1)
    total = weights.sum(axis=1)
    ece = np.zeros(weights.shape[0])
    for b in range(bins):
        inside = index == b
        if not inside.any():
            continue
        w = weights[:, inside]
        mass = w.sum(axis=1)
        safe = np.where(mass > 0, mass, 1.0)
        gap = np.abs((w * y[inside]).sum(axis=1) - (w * p[inside]).sum(axis=1)) / safe
        ece += np.where(mass > 0, mass / total * gap, 0.0)
    return ece


def decision_figures(
    probability: np.ndarray, positive: np.ndarray, threshold: float, weights: np.ndarray
) -> dict[str, np.ndarray]:
    """Precision, recall and F1 of ``p >= threshold`` per row of ``weights`` (NaN where a figure
    has no denominator: nothing flagged, no positive)."""
    flag = np.asarray(probability, dtype=np.float64) >= threshold
    y = np.asarray(positive, dtype=bool)
    tp = (weights * (flag & y)).sum(axis=1)
    flagged = (weights * flag).sum(axis=1)
    positives = (weights * y).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(flagged > 0, tp / flagged, np.nan)
        recall = np.where(positives > 0, tp / positives, np.nan)
        f1 = np.where(flagged + positives > 0, 2 * tp / (flagged + positives), np.nan)
    return {"precision": precision, "recall": recall, "f1": f1}


def best_f1_threshold(probability: np.ndarray, positive: np.ndarray) -> float:
    """The threshold among the probabilities that gives the highest F1 of ``p >= t`` (the lowest
    such threshold on a tie: more units flagged at equal F1)."""
    candidates = np.unique(np.asarray(probability, dtype=np.float64))
    ones = np.ones((1, len(probability)))
    scores = [float(decision_figures(probability, positive, float(t), ones)["f1"][0]) for t in candidates]
    best = np.nanargmax(np.asarray(scores))
    return float(candidates[best])


def precision_target_threshold(probability: np.ndarray, positive: np.ndarray, target: float) -> float | None:
    """The lowest threshold among the probabilities whose flag ``p >= t`` reaches ``target``
    precision; None when none does."""
    ones = np.ones((1, len(probability)))
    for t in np.unique(np.asarray(probability, dtype=np.float64)):
        precision = float(decision_figures(probability, positive, float(t), ones)["precision"][0])
        if precision >= target:
            return float(t)
    return None


def reliability_bins(probability: np.ndarray, positive: np.ndarray, bins: int = ECE_BINS) -> list[list[float]]:
    """The reliability diagram's points: for each non-empty bin of the ECE's, the mean
    probability, the share of hallucinated units and the number of units."""
    p = np.asarray(probability, dtype=np.float64)
    y = np.asarray(positive, dtype=np.float64)
    index = np.minimum((p * bins).astype(int), bins - 1)
    points = []
    for b in range(bins):
        inside = index == b
        if inside.any():
            points.append([round(float(p[inside].mean()), 4), round(float(y[inside].mean()), 4), int(inside.sum())])
    return points
