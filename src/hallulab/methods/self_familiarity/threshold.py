"""The refusal threshold from the basic concepts (Self-Familiarity Appendix D), never from
test labels.

The paper bootstraps "the 95% threshold interval of the scores of basic concepts" and takes
its midpoint; the released code (``benchmark_exp``) bootstraps the 5th percentile of the basic
concepts' familiarity with ``scipy.stats.bootstrap``, whose default interval is the
bias-corrected and accelerated one (BCa, 9,999 resamples), and takes the midpoint of its 95%
interval:

    h = (lo + hi) / 2,  [lo, hi] = BCa 95% interval of P_5(s) over the basic concepts.

Scores here are hallucination scores (higher = refuse), so the percentile is taken of their
negation (a familiarity in the same order) and the threshold negated back: most familiar
(basic) instructions are answered. Decision: refuse when score > threshold.

``method: bca`` (the released code; seeded, where the released code's generator is not) falls
back to the percentile interval where BCa is undefined (constant scores, or a single one);
``method: percentile`` (the plain percentile bootstrap, this project's earlier reading) is a
named setting.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from hallulab.methods.self_familiarity.knobs import ThresholdKnobs


class BasicThreshold(NamedTuple):
    """The threshold and the interval that gave it (``bca``, or ``percentile`` also where BCa
    is undefined); NaN without basic records."""

    value: float
    method: str


def _percentile_midpoint(familiarity: np.ndarray, cfg: ThresholdKnobs) -> float:
    rng = np.random.default_rng(cfg.seed)
    draws = rng.choice(familiarity, size=(cfg.bootstrap_samples, familiarity.size), replace=True)
    percentiles = np.percentile(draws, cfg.basic_percentile, axis=1)
    tail = 100.0 * (1.0 - cfg.ci_level) / 2.0
    low, high = np.percentile(percentiles, [tail, 100.0 - tail])
    return float((low + high) / 2.0)


def _bca_midpoint(familiarity: np.ndarray, cfg: ThresholdKnobs) -> float:
    """Midpoint of scipy's BCa interval of the percentile; NaN where BCa is undefined."""
    from scipy.stats import bootstrap

    def statistic(x: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(np.percentile(x, cfg.basic_percentile, axis=axis))

    if familiarity.size < 2:
        return float("nan")
    generator = np.random.default_rng(cfg.seed)
    seeded = {"rng": generator} if "rng" in inspect.signature(bootstrap).parameters else {"random_state": generator}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns, then returns NaN, on degenerate data
        found = bootstrap(
            (familiarity,),
            statistic,
            n_resamples=cfg.bootstrap_samples,
            confidence_level=cfg.ci_level,
            method="BCa",
            **seeded,
        )
    low, high = found.confidence_interval
    return float((low + high) / 2.0)


def basic_threshold(scores: Sequence[float], cfg: ThresholdKnobs) -> BasicThreshold:
    """Midpoint of the bootstrap interval of the p-th percentile of the basic records'
    familiarity (their negated hallucination scores), negated back; NaN without basic records."""
    values = np.asarray([s for s in scores if np.isfinite(s)], dtype=np.float64)
    if values.size == 0:
        return BasicThreshold(float("nan"), cfg.method)
    if cfg.method == "bca":
        midpoint = _bca_midpoint(-values, cfg)
        if math.isfinite(midpoint):
            return BasicThreshold(-midpoint, "bca")
    return BasicThreshold(-_percentile_midpoint(-values, cfg), "percentile")
