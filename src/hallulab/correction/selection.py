"""Dev / test split of passages and F1-maximising thresholds on the dev split (pure)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np


def in_dev_split(record_id: str, dev_fraction: float, seed: int) -> bool:
    """A stable pseudo-random assignment of a record to the development split."""
    digest = hashlib.sha256(f"{seed}:{record_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < dev_fraction


#: which of equal-F1 thresholds is chosen: this project's higher one (fewer flags), or the
#: lower one, as the released code's ``np.argmax`` over sklearn's increasing thresholds picks
TIES = ("higher", "lower")


def f1_threshold(scores: Sequence[float], positive: Sequence[bool], ties: str = "higher") -> tuple[float, float]:
    """(threshold, F1) maximising F1 = 2PR / (P + R) of ``score >= threshold`` over the
    candidate thresholds (every distinct finite score); of equal F1, ``ties`` says which (the
    higher by default; ``lower`` is what FactSelfCheck's released ``get_thresholds`` in
    ``scripts/correction/correct.py`` returns: the first maximum of sklearn's
    precision-recall curve, whose thresholds increase). A unit scored -inf has
    nothing that could be flagged (a sentence without facts, at the fact level): it is never
    predicted positive and never a candidate, so no threshold is chosen that would flag on the
    development split what can never be flagged at test time. NaN, NaN without positives or
    without a candidate."""
    if ties not in TIES:
        raise ValueError(f"ties: {ties!r} is not one of {list(TIES)}")
    values = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(positive, dtype=bool)
    candidates = sorted(set(values[np.isfinite(values)].tolist()))
    if not labels.any() or not candidates:
        return float("nan"), float("nan")
    best = (float("nan"), -1.0)
    for threshold in candidates:  # increasing
        predicted = values >= threshold
        tp = float((predicted & labels).sum())
        precision = tp / max(float(predicted.sum()), 1.0)
        recall = tp / float(labels.sum())
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        tied = abs(f1 - best[1]) <= 1e-12  # the same F1 reached by another count of flags
        if (f1 > best[1] and not tied) or (tied and ties == "higher"):
            best = (float(threshold), f1)
    return best
