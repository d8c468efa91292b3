from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import auc, average_precision_score, precision_recall_curve, roc_auc_score

from hallulab.evaluation.metrics import aucpr_trapezoid, average_precision, pearson, roc_auc, spearman


def _cases() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    cases = []
    for size in (5, 40, 500):
        y = rng.random(size) < 0.4
        y[0], y[1] = True, False
        cases.append((y, rng.normal(size=size)))
        cases.append((y, rng.integers(0, 4, size).astype(float)))  # many ties
    return cases


@pytest.mark.parametrize(("y", "s"), _cases())
def test_aucpr_trapezoid_equals_sklearn_pr_curve_then_auc(y: np.ndarray, s: np.ndarray) -> None:
    precision, recall, _ = precision_recall_curve(y, s)
    assert aucpr_trapezoid(y, s) == pytest.approx(auc(recall, precision), abs=1e-12)


@pytest.mark.parametrize(("y", "s"), _cases())
def test_average_precision_equals_sklearn(y: np.ndarray, s: np.ndarray) -> None:
    assert average_precision(y, s) == pytest.approx(average_precision_score(y, s), abs=1e-12)


@pytest.mark.parametrize(("y", "s"), _cases())
def test_roc_auc_equals_sklearn(y: np.ndarray, s: np.ndarray) -> None:
    assert roc_auc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def test_trapezoid_aucpr_differs_from_average_precision_on_ties() -> None:
    y = np.array([1, 0, 1, 0, 1, 1], bool)
    s = np.array([0.9, 0.9, 0.5, 0.5, 0.1, 0.8])
    assert aucpr_trapezoid(y, s) != pytest.approx(average_precision(y, s))


def test_correlations_equal_scipy() -> None:
    rng = np.random.default_rng(1)
    x, z = rng.normal(size=50), rng.integers(0, 5, 50).astype(float)
    assert pearson(x, z) == pytest.approx(pearsonr(x, z)[0], abs=1e-12)
    assert spearman(x, z) == pytest.approx(spearmanr(x, z)[0], abs=1e-12)


def test_nan_scores_are_rejected() -> None:
    with pytest.raises(ValueError, match="NaN"):
        aucpr_trapezoid(np.array([1, 0], bool), np.array([np.nan, 1.0]))
