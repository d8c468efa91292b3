"""The summary printed after `make experiment`: the stage's table, or a partial one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hallulab.evaluation.summary import main

ROOT = Path(__file__).resolve().parents[1]


def test_without_the_summary_stage_the_evaluated_methods_are_printed_as_partial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`make experiment TARGETS=aggregate_factselfcheck` runs no summary stage: the table is
    rendered from the metrics present, says it is partial and names the models; nothing is
    written."""
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    metrics = tmp_path / "metrics" / "factualbio"
    metrics.mkdir(parents=True)
    (metrics / "factselfcheck.json").write_text(
        json.dumps({"fsc_kg_freq_max": {"claim_roc_auc": 49.5, "claim_pr_auc": 29.8, "claim_prr": -2.4}})
    )
    (metrics / "factselfcheck.info.json").write_text(json.dumps({"levels": {"claim": {"labelled_units": 150}}}))
    monkeypatch.chdir(tmp_path)
    main(["--dataset", "factualbio"])
    out = capsys.readouterr().out
    assert "Partial: the summary stage has not run" in out
    assert "fsc_kg_freq_max" in out and "49.5" in out and "LLMs by role: smollm2" in out
    assert not (metrics / "summary.md").exists()


def test_no_metrics_at_all_is_an_error_that_says_what_to_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit, match="run the pipeline first"):
        main(["--dataset", "wikibio"])
