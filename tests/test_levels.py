"""Evaluation at every labelled level: claim / fact, response and prompt units."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from hallulab.core.units import ScoreTable
from hallulab.data.schema import GivenClaim, Record
from hallulab.evaluation.levels import evaluate_binary_level, evaluate_levels, unit_labels
from hallulab.evaluation.metrics import prediction_rejection_ratio
from hallulab.evaluation.protocol import ProtocolKnobs

CFG = ProtocolKnobs(bootstrap_samples=100)


def _claims_passage(pid: str, labels: list[float | None]) -> Record:
    claims = tuple(GivenClaim(f"claim {i}", label) for i, label in enumerate(labels))
    return Record(id=pid, response="A. B.", sentences=("A.", "B."), claims=claims)


def test_claim_level_metrics_follow_the_ccp_protocol() -> None:
    records = [_claims_passage("a", [0.0, 1.0, 0.5, None]), _claims_passage("b", [0.0, 0.0, 1.0])]
    table = ScoreTable()
    scores = {("a", 0): 0.1, ("a", 1): 0.8, ("a", 2): 0.3, ("a", 3): 0.9, ("b", 0): 0.4, ("b", 1): 0.2, ("b", 2): 0.7}
    for (rid, index), score in scores.items():
        table.add("ccp", "claim", rid, index, score)
    result = evaluate_binary_level(records, table.frame(), "claim", CFG)
    assert result is not None
    y = np.array([0, 1, 1, 0, 0, 1])  # minor false counts as unsupported; the unlabelled claim is left out
    s = np.array([0.1, 0.8, 0.3, 0.4, 0.2, 0.7])
    metrics = result.metrics["ccp"]
    assert metrics["claim_roc_auc"] == pytest.approx(100 * roc_auc_score(y, s))
    assert metrics["claim_pr_auc"] == pytest.approx(100 * average_precision_score(y, s))
    assert metrics["claim_prr"] == pytest.approx(100 * prediction_rejection_ratio(y.astype(bool), s))
    assert result.counts["labelled_units"] == 6 and result.counts["positives"] == 3
    low, high = result.intervals["ccp"]["claim_roc_auc"].bounds()
    assert low <= metrics["claim_roc_auc"] <= high


def test_response_level_uses_the_response_label() -> None:
    records = [
        Record(id=f"r{i}", response="Paris.", sentences=("Paris.",), response_label=float(i % 2)) for i in range(6)
    ]
    table = ScoreTable()
    for i, record in enumerate(records):
        table.add_response("halucheck", record.id, 0.9 if i % 2 else 0.1 + 0.01 * i)
    metrics = evaluate_levels(records, table.frame(), CFG)["response"].metrics["halucheck"]
    assert metrics["response_roc_auc"] == 100.0 and metrics["response_ap"] == 100.0


def test_prompt_level_accuracy_and_f1_use_the_methods_threshold_only() -> None:
    records = [Record(id=f"p{i}", response=None, sentences=(), prompt="q", prompt_label=float(i < 3)) for i in range(6)]
    table = ScoreTable()
    for i, record in enumerate(records):
        table.add("familiarity", "prompt", record.id, 0, [0.9, 0.8, 0.2, 0.3, 0.1, 0.0][i])
    without = evaluate_levels(records, table.frame(), CFG)["prompt"].metrics["familiarity"]
    assert math.isnan(without["prompt_acc"]) and without["prompt_auc"] == pytest.approx(100 * 8 / 9)
    at = evaluate_levels(records, table.frame(), CFG, thresholds={"familiarity": 0.5})["prompt"]
    assert at.metrics["familiarity"]["prompt_acc"] == pytest.approx(100 * 5 / 6)
    # F1 takes familiar as the positive class (Table 2, the released code): 3 familiar, 4 answered
    assert at.metrics["familiarity"]["prompt_f1"] == pytest.approx(100 * 6 / 7)
    assert at.metrics["familiarity"]["prompt_f1_unfamiliar"] == pytest.approx(100 * 0.8)
    refuse_all = evaluate_levels(records, table.frame(), CFG, thresholds={"familiarity": -1.0})["prompt"]
    assert refuse_all.metrics["familiarity"]["prompt_f1"] == 0.0  # a model that refuses everything


def test_one_class_only_is_undefined_and_no_labels_gives_no_level() -> None:
    records = [_claims_passage("a", [0.0, 0.0])]
    table = ScoreTable()
    table.add("v", "claim", "a", 0, 0.1)
    table.add("v", "claim", "a", 1, 0.2)
    result = evaluate_binary_level(records, table.frame(), "claim", CFG)
    assert result is not None and math.isnan(result.metrics["v"]["claim_roc_auc"])
    assert evaluate_levels([Record(id="x", response="A.", sentences=("A.",))], table.frame(), CFG) == {}
    assert unit_labels(records, "response").keys == []


def test_a_methods_own_facts_are_never_matched_to_the_data_sets_claims() -> None:
    """FactSelfCheck's triples and HalluCheck's NER facts (level fact) are units the method
    found; the data set's labelled claims are level claim, so fact rows get no labels."""
    records = [_claims_passage("a", [0.0, 1.0])]
    table = ScoreTable()
    table.add("v", "fact", "a", 0, 0.9, sentence_index=0)
    table.add("v", "fact", "a", 1, 0.1, sentence_index=0)
    assert unit_labels(records, "fact").keys == []
    assert evaluate_binary_level(records, table.frame(), "fact", CFG) is None
    assert unit_labels(records, "claim").keys == [("a", 0), ("a", 1)]
