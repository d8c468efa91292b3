"""L2-penalised logistic regression by Newton's method (the ensemble's supervised combiner).

Minimises ``-sum_i [y_i log p_i + (1 - y_i) log(1 - p_i)] + (lambda / 2) ||w||^2`` with
``p_i = sigmoid(b + x_i . w)`` and the intercept ``b`` unpenalised: scikit-learn's
``LogisticRegression(C=1/lambda)`` objective (its default lbfgs solver reaches the same
optimum; ``tests/test_ensemble.py`` compares the two). A few features, a few thousand units:
Newton's method converges in a handful of steps and needs no dependency beyond numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LogisticModel:
    """Fitted weights (one per feature), intercept and the Newton steps taken."""

    weights: np.ndarray
    intercept: float
    iterations: int

    def log_odds(self, features: np.ndarray) -> np.ndarray:
        return self.intercept + features @ self.weights


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return np.where(z >= 0, 1.0 / (1.0 + np.exp(-np.abs(z))), np.exp(-np.abs(z)) / (1.0 + np.exp(-np.abs(z))))


def fit_logistic(
    features: np.ndarray, labels: np.ndarray, l2: float, max_iterations: int = 100, tolerance: float = 1e-10
) -> LogisticModel:
    """The penalised maximum-likelihood fit (see the module docstring); ``l2`` > 0."""
    if l2 <= 0:
        raise ValueError(f"l2 must be > 0, got {l2}")
    x = np.column_stack([np.ones(len(features)), np.asarray(features, dtype=np.float64)])
    y = np.asarray(labels, dtype=np.float64)
    penalty = np.full(x.shape[1], l2)
    penalty[0] = 0.0  # the intercept is not penalised
    beta = np.zeros(x.shape[1])
    iterations = 0
    for iterations in range(1, max_iterations + 1):  # noqa: B007 (the count is reported)
        p = _sigmoid(x @ beta)
        gradient = x.T @ (p - y) + penalty * beta
        hessian = (x * (p * (1.0 - p))[:, None]).T @ x + np.diag(penalty)
        hessian[0, 0] += 1e-12  # one class only: keeps the intercept's row solvable
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if float(np.max(np.abs(step))) < tolerance:
            break
    return LogisticModel(weights=beta[1:], intercept=float(beta[0]), iterations=iterations)
