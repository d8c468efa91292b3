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
    (every distinct score); ties go to the higher threshold. NaN, NaN without positives."""
    values = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(positive, dtype=bool)
    if not labels.any():
        return float("nan"), float("nan")
    best = (float("nan"), -1.0)
    for threshold in sorted(set(values.tolist())):
        predicted = values >= threshold
        tp = float((predicted & labels).sum())
        precision = tp / max(float(predicted.sum()), 1.0)
        recall = tp / float(labels.sum())
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        if f1 >= best[1]:
            best = (float(threshold), f1)
    return best
