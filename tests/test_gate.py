from __future__ import annotations

import json
from pathlib import Path

from hallulab.evaluation.gate import check, main

BASELINE = {"tolerance": 0.05, "metrics": {"v1": {"nonfact_aucpr": 80.0, "roc_auc": 70.0}}}


def test_gate_passes_within_tolerance() -> None:
    assert check({"v1": {"nonfact_aucpr": 80.04, "roc_auc": 69.96, "extra": 1.0}}, BASELINE) == []


def test_gate_catches_a_planted_metric_change() -> None:
    violations = check({"v1": {"nonfact_aucpr": 80.2, "roc_auc": 70.0}}, BASELINE)
    assert [(v.variant, v.metric) for v in violations] == [("v1", "nonfact_aucpr")]
    assert "moved +0.2000" in str(violations[0])


def test_gate_fails_on_a_missing_variant_or_nan() -> None:
    assert len(check({}, BASELINE)) == 2
    assert len(check({"v1": {"nonfact_aucpr": float("nan"), "roc_auc": 70.0}}, BASELINE)) == 1


def test_gate_cli_exit_code_and_update(tmp_path: Path) -> None:
    metrics = tmp_path / "m.json"
    baseline = tmp_path / "b.json"
    baseline.write_text(json.dumps(BASELINE))
    metrics.write_text(json.dumps({"v1": {"nonfact_aucpr": 81.0, "roc_auc": 70.0}}))
    assert main([str(metrics), str(baseline)]) == 1
    assert main([str(metrics), str(baseline), "--update"]) == 0
    assert main([str(metrics), str(baseline)]) == 0
    assert json.loads(baseline.read_text())["tolerance"] == 0.05


def test_an_undefined_baseline_metric_must_stay_undefined() -> None:
    baseline = {"tolerance": 0.01, "metrics": {"prompt": {"passage_pearson": None, "roc_auc": 50.0}}}
    assert not check({"prompt": {"passage_pearson": None, "roc_auc": 50.0}}, baseline)
    moved = check({"prompt": {"passage_pearson": 12.5, "roc_auc": 50.0}}, baseline)
    assert [(v.variant, v.metric) for v in moved] == [("prompt", "passage_pearson")]
