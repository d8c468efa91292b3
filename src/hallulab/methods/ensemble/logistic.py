"""The ensemble's supervised combiner: an L2-penalised logistic regression, fit by
scikit-learn's ``LogisticRegression`` (Pedregosa et al., 2011, "Scikit-learn: Machine
Learning in Python").

The fit minimises

    -sum_i [y_i log p_i + (1 - y_i) log(1 - p_i)] + (lambda / 2) ||w||^2,   p_i = sigmoid(b + x_i . w)

over the weights ``w`` and the intercept ``b``, on the features as given (no standardisation).
scikit-learn writes its L2-penalised objective as ``C * sum_i loss_i + (1 / 2) ||w||^2``, the
same minimiser for ``C = 1 / lambda``; how :func:`logistic_regression` sets it:

* ``C = 1 / lambda`` and the default penalty, L2 (``penalty='l2'`` before scikit-learn 1.8,
  ``l1_ratio=0.0`` since);
* ``fit_intercept=True``: ``b`` is fit and, with the newton-cholesky solver, not penalised
  (only liblinear penalises the intercept);
* ``solver='newton-cholesky'``: Newton's method from ``w = 0, b = 0``, each step a Cholesky
  solve with the Hessian of the objective, then a backtracking line search;
* ``tol=1e-14``: it stops once the largest absolute gradient of the objective divided by
  the number of units, and half the squared Newton decrement, are at most ``tol``. Newton's
  method converges quadratically, so the fit is the optimum to within rounding; a looser
  ``tol`` (scikit-learn's default 1e-4) stops a step or two earlier, away from it;
* ``max_iter=100`` bounds the Newton steps.
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression

TOLERANCE = 1e-14
"""``tol``: the largest absolute per-unit gradient (and half the squared Newton decrement) accepted."""
MAX_ITER = 100
"""``max_iter``: the most Newton steps."""


def logistic_regression(l2: float) -> LogisticRegression:
    """The unfitted estimator for the penalty ``l2`` (lambda > 0), parameters as the module
    docstring maps them."""
    if l2 <= 0:
        raise ValueError(f"l2 must be > 0, got {l2}")
    return LogisticRegression(
        C=1.0 / l2, fit_intercept=True, solver="newton-cholesky", tol=TOLERANCE, max_iter=MAX_ITER
    )


def fit_logistic(features: np.ndarray, labels: np.ndarray, l2: float) -> LogisticRegression:
    """The penalised maximum-likelihood fit of ``labels`` (0 / 1, both present) on
    ``features``; its ``decision_function`` is the log-odds ``b + x . w``, ``coef_[0]`` is
    ``w`` and ``intercept_[0]`` is ``b``."""
    return logistic_regression(l2).fit(np.asarray(features, dtype=np.float64), np.asarray(labels, dtype=np.float64))
