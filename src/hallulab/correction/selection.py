"""Dev / test split of passages and F1-maximising thresholds on the dev split (pure)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np


def in_dev_split(record_id: str, dev_fraction: float, seed: int) -> bool:
    """A stable pseudo-random assignment of a record to the development split."""
    digest = hashlib.sha256(f"{seed}:{record_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < dev_fraction


def f1_threshold(scores: Sequence[float], positive: Sequence[bool]) -> tuple[float, float]:
    """(threshold, F1) maximising F1 of ``score >= threshold`` over the candidate thresholds
    (every distinct finite score); ties go to the higher threshold. A unit scored -inf has
    nothing that could be flagged (a sentence without facts, at the fact level): it is never
    predicted positive and never a candidate, so no threshold is chosen that would flag on the
    development split what can never be flagged at test time. NaN, NaN without positives or
    without a candidate."""
    values = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(positive, dtype=bool)
    candidates = sorted(set(values[np.isfinite(values)].tolist()))
    if not labels.any() or not candidates:
        return float("nan"), float("nan")
    best = (float("nan"), -1.0)
    for threshold in candidates:
        predicted = values >= threshold
        tp = float((predicted & labels).sum())
        precision = tp / max(float(predicted.sum()), 1.0)
        recall = tp / float(labels.sum())
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        if f1 >= best[1]:
            best = (float(threshold), f1)
    return best
