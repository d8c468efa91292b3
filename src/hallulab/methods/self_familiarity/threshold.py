"""The refusal threshold from the basic concepts (Self-Familiarity Appendix D), never from
test labels.

The paper bootstraps "the 95% threshold interval of the scores of basic concepts" and takes
its midpoint; the released code bootstraps the 5th percentile of the basic concepts'
familiarity and takes the midpoint of its 95% percentile interval. With hallucination scores
(higher = refuse) that is the 95th percentile: most familiar (basic) instructions are
answered. Decision: refuse when score > threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hallulab.core.config import setting


@dataclass(frozen=True)
class ThresholdConfig:
    """params ``self_familiarity.threshold``."""

    basic_percentile: float = setting(5.0, above=0.0, maximum=99.0, doc="percentile of the basic familiarity scores")
    bootstrap_samples: int = setting(1000, minimum=1)
    ci_level: float = setting(0.95, above=0.0, maximum=0.999)
    seed: int = 42  # Appendix D: seed 42


def basic_threshold(scores: Sequence[float], cfg: ThresholdConfig) -> float:
    """Midpoint of the bootstrap interval of the (100 - p)-th percentile of hallucination
    scores on basic records; NaN without basic records."""
    values = np.asarray([s for s in scores if np.isfinite(s)], dtype=np.float64)
    if values.size == 0:
        return float("nan")
    rng = np.random.default_rng(cfg.seed)
    draws = rng.choice(values, size=(cfg.bootstrap_samples, values.size), replace=True)
    percentiles = np.percentile(draws, 100.0 - cfg.basic_percentile, axis=1)
    tail = 100.0 * (1.0 - cfg.ci_level) / 2.0
    low, high = np.percentile(percentiles, [tail, 100.0 - tail])
    return float((low + high) / 2.0)
