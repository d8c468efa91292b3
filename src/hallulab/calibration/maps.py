"""Score-to-probability maps: isotonic regression and Platt scaling, stored as plain numbers.

Both are fitted with scikit-learn's public estimators and kept as the numbers that define them,
so a stored calibration is JSON (no pickle) and applying it needs no scikit-learn:

* **isotonic** (Zadrozny & Elkan, 2002): ``IsotonicRegression(out_of_bounds="clip",
  increasing=True)``, a non-decreasing step-wise-linear map; kept as its knots
  (``X_thresholds_``, ``y_thresholds_``) and applied by linear interpolation between them,
  clipped at the ends, as ``IsotonicRegression.predict`` does;
* **Platt** (Platt, 1999): ``p = 1 / (1 + exp(-(a * s + b)))``, the logistic regression of the
  label on the score (``LogisticRegression`` with ``C = inf``, no penalty); kept as ``(a, b)``.

Higher scores mean more likely hallucinated for every method (the project's convention), so
both maps are fitted increasing: the probability is that of the unit being hallucinated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

KINDS = ("isotonic", "platt")


@dataclass(frozen=True)
class IsotonicMap:
    """Knots of a non-decreasing map from score to probability."""

    x: tuple[float, ...]
    y: tuple[float, ...]

    def __call__(self, scores: np.ndarray) -> np.ndarray:
        return np.interp(np.asarray(scores, dtype=np.float64), self.x, self.y)

    def to_dict(self) -> dict[str, list[float]]:
        return {"x": list(self.x), "y": list(self.y)}


@dataclass(frozen=True)
class PlattMap:
    """``p = 1 / (1 + exp(-(a * score + b)))``."""

    a: float
    b: float

    def __call__(self, scores: np.ndarray) -> np.ndarray:
        logits = self.a * np.asarray(scores, dtype=np.float64) + self.b
        return np.asarray(1.0 / (1.0 + np.exp(-logits)))

    def to_dict(self) -> dict[str, float]:
        return {"a": self.a, "b": self.b}


def fit_isotonic(scores: np.ndarray, positive: np.ndarray) -> IsotonicMap:
    """scikit-learn's isotonic regression of the label on the score, as its knots."""
    from sklearn.isotonic import IsotonicRegression

    fitted = IsotonicRegression(out_of_bounds="clip", increasing=True, y_min=0.0, y_max=1.0)
    fitted.fit(np.asarray(scores, dtype=np.float64), np.asarray(positive, dtype=np.float64))
    return IsotonicMap(tuple(map(float, fitted.X_thresholds_)), tuple(map(float, fitted.y_thresholds_)))


def fit_platt(scores: np.ndarray, positive: np.ndarray) -> PlattMap:
    """scikit-learn's unpenalised logistic regression of the label on the score, its two
    parameters kept to :data:`PLATT_DIGITS` significant digits.

    L-BFGS stops at a gradient tolerance far coarser than that, and its last bits depend on the
    CPU's vector kernels (two x86-64 CPUs give parameters a few units in the last place apart);
    rounded, the committed calibration files are the same bytes on every CPU."""
    from sklearn.linear_model import LogisticRegression

    fitted = LogisticRegression(C=np.inf, solver="lbfgs", max_iter=1000)  # C = inf: no penalty
    fitted.fit(np.asarray(scores, dtype=np.float64).reshape(-1, 1), np.asarray(positive, dtype=int))
    return PlattMap(_significant(float(fitted.coef_[0][0])), _significant(float(fitted.intercept_[0])))


#: significant digits kept of a Platt map's parameters (:func:`fit_platt`)
PLATT_DIGITS = 10


def _significant(value: float) -> float:
    return float(f"{value:.{PLATT_DIGITS}g}")


def fit_map(kind: str, scores: np.ndarray, positive: np.ndarray) -> IsotonicMap | PlattMap:
    """The ``kind`` map (one of :data:`KINDS`) fitted on ``scores`` and their labels."""
    if kind == "isotonic":
        return fit_isotonic(scores, positive)
    if kind == "platt":
        return fit_platt(scores, positive)
    raise ValueError(f"calibration kind {kind!r} is not one of {KINDS}")


class MapError(ValueError):
    """A stored map that is not one of its kind: the ``field`` inside it and what is wrong."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")


def _finite(value: object, field: str) -> float:
    """``value`` as a float: a JSON number (no bool, no string) that is finite."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MapError(field, f"{value!r} is not a number")
    if not math.isfinite(value):
        raise MapError(field, f"{value!r} is not a finite number")
    return float(value)


def _knots(stored: dict[str, object], name: str) -> tuple[float, ...]:
    values = stored.get(name)
    if not isinstance(values, list) or not values:
        raise MapError(name, "missing or not a non-empty list of numbers")
    return tuple(_finite(value, f"{name}[{i}]") for i, value in enumerate(values))


def _isotonic_from_dict(stored: dict[str, object]) -> IsotonicMap:
    """Knots that make a map :func:`fit_isotonic` can give: finite, ``x`` strictly increasing
    (``np.interp`` reads nonsense from knots out of order), ``y`` probabilities, non-decreasing."""
    x, y = _knots(stored, "x"), _knots(stored, "y")
    if len(x) != len(y):
        raise MapError("y", f"{len(y)} values for {len(x)} knots in x; an isotonic map holds one per knot")
    for i in range(1, len(x)):
        if not x[i] > x[i - 1]:
            raise MapError(f"x[{i}]", f"{x[i]!r} does not exceed x[{i - 1}] = {x[i - 1]!r}; the knots increase")
    for i, value in enumerate(y):
        if not 0.0 <= value <= 1.0:
            raise MapError(f"y[{i}]", f"{value!r} is not a probability in [0, 1]")
        if i and value < y[i - 1]:
            raise MapError(f"y[{i}]", f"{value!r} is below y[{i - 1}] = {y[i - 1]!r}; the map never decreases")
    return IsotonicMap(x, y)


def map_from_dict(kind: str, stored: object) -> IsotonicMap | PlattMap:
    """A map read back from what its ``to_dict`` wrote, its numbers checked: a field that no
    fit can give is a :class:`MapError` naming it."""
    if not isinstance(stored, dict):
        raise MapError("", f"not a {kind} map (no JSON object)")
    if kind == "isotonic":
        return _isotonic_from_dict(stored)
    if kind == "platt":
        return PlattMap(_finite(stored.get("a"), "a"), _finite(stored.get("b"), "b"))
    raise ValueError(f"calibration kind {kind!r} is not one of {KINDS}")


def highest_probability(fitted: IsotonicMap | PlattMap) -> float:
    """The highest probability ``fitted`` gives any score: its last knot's (isotonic), or 1
    (Platt's curve, which reaches 1.0 in floating point)."""
    return fitted.y[-1] if isinstance(fitted, IsotonicMap) else 1.0


def beyond_fitted_range(kind: str) -> str:
    """What the ``kind`` map gives a score beyond the scores it was fitted on."""
    if kind == "isotonic":
        return "their probability is the isotonic map's value at the nearest end of that range"
    return "their probability is Platt's logistic curve extrapolated beyond that range"
