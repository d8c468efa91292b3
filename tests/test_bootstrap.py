"""The vectorised bootstrap equals resampling passages in a loop and recomputing every metric."""

from __future__ import annotations

import numpy as np
import pytest

from hallulab.evaluation import bootstrap
from hallulab.evaluation.metrics import aucpr_trapezoid, average_precision, pearson, roc_auc, spearman
from hallulab.evaluation.protocol import LabelledScores, ProtocolKnobs, bootstrap_intervals, compute_metrics


def _data(seed: int, records: int = 25) -> LabelledScores:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, records)
    owner = np.repeat(np.arange(records), sizes)
    labels = rng.choice([0.0, 0.5, 1.0], size=len(owner))
    scores = np.round(rng.normal(size=len(owner)), 1)  # rounded: many ties
    passage_labels = np.array([labels[owner == p].mean() for p in range(records)])
    passage_scores = np.round(rng.normal(size=records), 1)
    return LabelledScores(labels, scores, owner, passage_labels, passage_scores)


def _loop_intervals(data: LabelledScores, cfg: ProtocolKnobs) -> dict[str, list[float]]:
    """The definition: draw passages with replacement, rebuild the data, recompute."""
    rng = np.random.default_rng(cfg.seed)
    n = len(data.passage_labels)
    draws: dict[str, list[float]] = {}
    for _ in range(cfg.bootstrap_samples):
        chosen = rng.integers(0, n, n)
        index = np.concatenate([np.flatnonzero(data.sentence_passage == p) for p in chosen])
        owner = np.concatenate([np.full((data.sentence_passage == p).sum(), i) for i, p in enumerate(chosen)])
        sample = LabelledScores(
            data.sentence_labels[index],
            data.sentence_scores[index],
            owner,
            data.passage_labels[chosen],
            data.passage_scores[chosen],
        )
        for key, value in compute_metrics(sample, cfg).items():
            draws.setdefault(key, []).append(value)
    return {key: list(bootstrap.percentile_interval(np.asarray(v), cfg.ci_level)) for key, v in draws.items()}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorised_intervals_equal_the_resampling_loop(seed: int) -> None:
    data = _data(seed)
    cfg = ProtocolKnobs(bootstrap_samples=200, seed=seed)
    fast = bootstrap_intervals(data, cfg)
    slow = _loop_intervals(data, cfg)
    for key, (low, high) in slow.items():
        assert fast[key].low == pytest.approx(low, abs=1e-9, nan_ok=True), key
        assert fast[key].high == pytest.approx(high, abs=1e-9, nan_ok=True), key


def test_unit_weights_give_the_plain_metrics() -> None:
    rng = np.random.default_rng(5)
    y = rng.random(60) < 0.4
    s = np.round(rng.normal(size=60), 1)
    ones = np.ones((1, 60))
    assert bootstrap.aucpr_trapezoid(y, s, ones)[0] == pytest.approx(aucpr_trapezoid(y, s), abs=1e-12)
    assert bootstrap.average_precision(y, s, ones)[0] == pytest.approx(average_precision(y, s), abs=1e-12)
    assert bootstrap.roc_auc(y, s, ones)[0] == pytest.approx(roc_auc(y, s), abs=1e-12)
    x = rng.normal(size=60)
    assert bootstrap.weighted_pearson(x, s, ones)[0] == pytest.approx(pearson(x, s), abs=1e-12)
    assert bootstrap.weighted_spearman(x, s, ones)[0] == pytest.approx(spearman(x, s), abs=1e-12)


def test_a_resample_with_one_class_is_undefined_not_zero() -> None:
    y = np.array([True, False])
    weights = np.array([[2.0, 0.0], [1.0, 1.0]])
    values = bootstrap.roc_auc(y, np.array([0.9, 0.1]), weights)
    assert np.isnan(values[0]) and values[1] == 1.0
