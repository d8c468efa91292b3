from __future__ import annotations

import numpy as np
import pytest

from hallulab.data.schema import Record
from hallulab.evaluation.protocol import (
    ProtocolKnobs,
    align,
    bootstrap_intervals,
    compute_metrics,
    finite_for_ranking,
    random_baseline,
    task_arrays,
)


def _passage(pid: str, labels: list[float]) -> Record:
    sentences = tuple(f"Sentence {i}." for i in range(len(labels)))
    return Record(id=pid, response=" ".join(sentences), sentences=sentences, labels=tuple(labels))


PASSAGES = [
    _passage("a", [0.0, 1.0, 0.5]),
    _passage("b", [1.0, 1.0]),  # total hallucination
    _passage("c", [0.0, 0.0, 1.0, 0.5]),
]
SENTENCE_SCORES = {"a": [0.1, 0.9, 0.6], "b": [0.7, 0.8], "c": [0.2, 0.3, 0.95, 0.4]}
PASSAGE_SCORES = {"a": 0.5, "b": 0.75, "c": 0.4}
CFG = ProtocolKnobs(bootstrap_samples=200)


def test_nonfact_star_excludes_total_hallucination_passages() -> None:
    y, s = task_arrays(align(PASSAGES, SENTENCE_SCORES, PASSAGE_SCORES), "nonfact_star", CFG)
    assert len(y) == 7  # passages a and c only
    assert y.tolist() == [False, True, False, False, False, True, False]  # minor counts as negative
    assert s.tolist() == [0.1, 0.9, 0.6, 0.2, 0.3, 0.95, 0.4]


def test_nonfact_counts_minor_and_major_as_positive() -> None:
    y, _ = task_arrays(align(PASSAGES, SENTENCE_SCORES, PASSAGE_SCORES), "nonfact", CFG)
    assert y.tolist() == [False, True, True, True, True, False, False, True, True]


def test_factual_task_scores_with_the_negated_score() -> None:
    y, s = task_arrays(align(PASSAGES, SENTENCE_SCORES, PASSAGE_SCORES), "factual", CFG)
    assert y.tolist() == [True, False, False, False, False, True, True, False, False]
    assert s[0] == -0.1


def test_metrics_are_percent_and_passage_level_uses_mean_labels() -> None:
    data = align(PASSAGES, SENTENCE_SCORES, PASSAGE_SCORES)
    assert data.passage_labels.tolist() == pytest.approx([0.5, 1.0, 0.375])
    metrics = compute_metrics(data, CFG)
    assert set(metrics) == {
        "nonfact_aucpr",
        "nonfact_star_aucpr",
        "factual_aucpr",
        "passage_pearson",
        "passage_spearman",
        "roc_auc",
        "avg_precision",
    }
    assert 0.0 <= metrics["nonfact_aucpr"] <= 100.0
    assert metrics["passage_spearman"] == pytest.approx(100.0)  # same order as the mean labels


def test_random_baseline_is_the_positive_rate() -> None:
    baseline = random_baseline(align(PASSAGES, SENTENCE_SCORES, PASSAGE_SCORES), CFG)
    assert baseline["nonfact_aucpr"] == pytest.approx(100 * 6 / 9)


def test_bootstrap_interval_brackets_the_estimate() -> None:
    data = align(PASSAGES, SENTENCE_SCORES, PASSAGE_SCORES)
    intervals = bootstrap_intervals(data, CFG)
    point = compute_metrics(data, CFG)
    for key in ("nonfact_aucpr", "roc_auc"):
        low, high = intervals[key].bounds()
        assert low <= point[key] <= high


def test_infinite_scores_rank_above_every_finite_one() -> None:
    values = finite_for_ranking(np.array([1.0, np.inf, 3.0, -np.inf, np.inf]))
    assert np.isfinite(values).all()
    assert values[1] == values[4] > 3.0 and values[3] < 1.0


def test_missing_scores_name_the_record() -> None:
    with pytest.raises(ValueError, match="'b'"):
        align(PASSAGES, {"a": [0.1, 0.2, 0.3]}, {"a": 0.1}, "v")


def test_score_count_mismatch_names_record_and_field() -> None:
    with pytest.raises(ValueError, match=r"'a', field 'sentences'"):
        align(PASSAGES, {**SENTENCE_SCORES, "a": [0.1]}, PASSAGE_SCORES, "v")


def test_unlabelled_passages_are_scored_but_not_evaluated() -> None:
    unlabelled = Record(id="u", response="X.", sentences=("X.",))
    data = align([*PASSAGES, unlabelled], {**SENTENCE_SCORES, "u": [0.3]}, {**PASSAGE_SCORES, "u": 0.3})
    assert len(data.passage_labels) == 3 and len(data.sentence_labels) == 9
