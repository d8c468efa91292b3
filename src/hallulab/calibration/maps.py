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
    """scikit-learn's unpenalised logistic regression of the label on the score."""
    from sklearn.linear_model import LogisticRegression

    fitted = LogisticRegression(C=np.inf, solver="lbfgs", max_iter=1000)  # C = inf: no penalty
    fitted.fit(np.asarray(scores, dtype=np.float64).reshape(-1, 1), np.asarray(positive, dtype=int))
    return PlattMap(float(fitted.coef_[0][0]), float(fitted.intercept_[0]))


def fit_map(kind: str, scores: np.ndarray, positive: np.ndarray) -> IsotonicMap | PlattMap:
    """The ``kind`` map (one of :data:`KINDS`) fitted on ``scores`` and their labels."""
    if kind == "isotonic":
        return fit_isotonic(scores, positive)
    if kind == "platt":
        return fit_platt(scores, positive)
    raise ValueError(f"calibration kind {kind!r} is not one of {KINDS}")


def map_from_dict(kind: str, stored: dict[str, object]) -> IsotonicMap | PlattMap:
    """A map read back from what its ``to_dict`` wrote."""
    if kind == "isotonic":
        x, y = stored["x"], stored["y"]
        if not isinstance(x, list) or not isinstance(y, list) or len(x) != len(y) or not x:
            raise ValueError("an isotonic map holds two lists of knots of one length")
        return IsotonicMap(tuple(float(v) for v in x), tuple(float(v) for v in y))
    if kind == "platt":
        a, b = stored["a"], stored["b"]
        if not isinstance(a, int | float) or not isinstance(b, int | float):
            raise ValueError("a Platt map holds two numbers, a and b")
        return PlattMap(float(a), float(b))
    raise ValueError(f"calibration kind {kind!r} is not one of {KINDS}")
