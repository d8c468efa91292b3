"""End to end through DVC: the toy DAG, exact invalidation, a -S override and a queued sweep."""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path

import pytest
import yaml

from hallulab.evaluation.gate import check
from hallulab.evaluation.protocol import METRIC_KEYS
from hallulab.nli.train import export_two_label
from tests.conftest import REPO
from tests.workspace import copy_workspace, dvc, git

pytestmark = pytest.mark.slow
SCORE_STAGES = (
    "score_selfcheck_ngram",
    "score_greybox",
    "score_selfcheck_nli",
    "score_selfcheck_bertscore",
    "score_selfcheck_prompt",
    "score_selfcheck_mqag",
)
EVALUATED_METHODS = (
    "selfcheck_ngram",
    "greybox",
    "selfcheck_nli",
    "selfcheck_bertscore",
    "selfcheck_prompt",
    "selfcheck_mqag",
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_workspace(tmp_path_factory.mktemp("dag"))
    dvc(root, "repro")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "reproduced")
    return root


def _changed_stages(root: Path) -> set[str]:
    status = json.loads(dvc(root, "status", "--json"))
    return set(status)


def _edit_params(root: Path, section: str, key: str, value: object) -> None:
    path = root / "params.yaml"
    params = yaml.safe_load(path.read_text())
    params[section][key] = value
    path.write_text(yaml.safe_dump(params, sort_keys=False))


def test_toy_dag_writes_every_metric_for_every_variant(workspace: Path) -> None:
    metrics = json.loads((workspace / "metrics/toy/selfcheck_ngram.json").read_text())
    assert set(metrics) == {f"ngram_n{n}_{a}" for n in range(1, 6) for a in ("avg", "max")}
    for values in metrics.values():
        assert list(values) == list(METRIC_KEYS)
        assert all(isinstance(v, float) and math.isfinite(v) for v in values.values())
    intervals = json.loads((workspace / "metrics/toy/selfcheck_ngram.ci.json").read_text())
    assert intervals["ngram_n1_max"]["roc_auc"][0] <= metrics["ngram_n1_max"]["roc_auc"]
    header = (workspace / "metrics/toy/pr/selfcheck_ngram_nonfact.csv").read_text().splitlines()[0]
    assert header == "variant,recall,precision"
    assert _changed_stages(workspace) == set()


@pytest.mark.parametrize("method", EVALUATED_METHODS)
def test_toy_metrics_pass_the_ci_gate(workspace: Path, method: str) -> None:
    metrics = json.loads((workspace / f"metrics/toy/{method}.json").read_text())
    baseline = json.loads((REPO / f"tests/baselines/toy/{method}.json").read_text())
    assert not check(metrics, baseline)


MATRIX_AGGREGATES = {f"aggregate_selfcheck@{v}" for v in ("nli", "bertscore", "prompt")}
EVALUATES = {f"evaluate@{m}" for m in EVALUATED_METHODS}
CURVES = {f"curve_num_samples@{v}" for v in ("nli", "bertscore", "prompt")}


@pytest.mark.parametrize(
    ("section", "key", "value", "expected"),
    [
        ("selfcheck_ngram", "n", [2], {"aggregate_selfcheck_ngram"}),
        ("selfcheck", "num_samples", 3, {"aggregate_selfcheck_ngram", "aggregate_selfcheck_mqag", *MATRIX_AGGREGATES}),
        ("selfcheck", "sample_selection", "random", {"aggregate_selfcheck_mqag", *MATRIX_AGGREGATES}),
        (
            "selfcheck_mqag",
            "score",
            {"methods": ["bayes"], "beta1": 0.7, "beta2": 0.8, "answerability_threshold": 0.5},
            {"aggregate_selfcheck_mqag"},
        ),
        ("evaluate", "bootstrap_samples", 10, EVALUATES | CURVES),
        ("spacy", "batch_size", 8, {"generate", "score_selfcheck_ngram", "score_selfcheck_bertscore"}),
        ("nli", "batch_size", 8, {"score_selfcheck_nli"}),
        ("nli_train", "epochs", 2, {"train_nli"}),
        ("bertscore", "num_layers", 4, {"score_selfcheck_bertscore"}),
        ("selfcheck_prompt", "max_new_tokens", 3, {"score_selfcheck_prompt"}),
        ("greybox", "prefix", "Biography:", {"score_greybox"}),
        ("generate", "num_samples", 3, {"generate"}),
        ("selfcheck_ngram", "response_split", "spacy", {"score_selfcheck_ngram"}),
        ("dataset", "limit", 3, {"prepare"}),
    ],
)
def test_a_param_edit_invalidates_exactly_the_stages_that_read_it(
    workspace: Path, section: str, key: str, value: object, expected: set[str]
) -> None:
    try:
        _edit_params(workspace, section, key, value)
        # the first stage that reads the knob is invalid; its downstream stages become
        # invalid only if that stage's outputs then change (DVC compares output hashes)
        assert _changed_stages(workspace) == expected
    finally:
        git(workspace, "checkout", "params.yaml")


def test_a_code_edit_invalidates_only_the_stages_that_import_it(workspace: Path) -> None:
    path = workspace / "src/hallulab/evaluation/metrics.py"
    original = path.read_text()
    try:
        path.write_text(original + "\n# edited\n")
        assert _changed_stages(workspace) == EVALUATES | CURVES
    finally:
        path.write_text(original)


def test_exp_run_override_reruns_only_stages_reading_the_knob(workspace: Path) -> None:
    try:
        log = dvc(workspace, "exp", "run", "-S", "selfcheck_ngram.n=2")
        assert "Stage 'score_selfcheck_ngram' didn't change, skipping" in log
        assert "Running stage 'aggregate_selfcheck_ngram'" in log
        metrics = json.loads((workspace / "metrics/toy/selfcheck_ngram.json").read_text())
        assert set(metrics) == {"ngram_n2_avg", "ngram_n2_max"}
    finally:
        git(workspace, "checkout", "--", ".")
        dvc(workspace, "checkout", "--force")


def test_queued_sweep_over_n_runs_offline_without_rescoring(workspace: Path) -> None:
    dvc(workspace, "exp", "run", "--queue", "-S", "selfcheck.num_samples=range(2,4)")
    dvc(workspace, "queue", "start", "-j", "1")
    deadline = time.time() + 600
    try:
        while time.time() < deadline:
            status = dvc(workspace, "queue", "status")
            if "Queued" not in status and "Running" not in status:
                break
            time.sleep(3)
        assert status.count("Success") >= 2, status
        names = [line.split()[1] for line in status.splitlines() if "Success" in line]
        for name in names:
            log = dvc(workspace, "queue", "logs", name)
            for stage in SCORE_STAGES:  # no model call, no spaCy: every expensive stage is skipped
                assert f"Stage '{stage}' didn't change, skipping" in log, stage
                assert f"Running stage '{stage}'" not in log
            # the cheap stages either ran or came back from DVC's run-cache
            for stage in ("aggregate_selfcheck_ngram", "aggregate_selfcheck@nli", "aggregate_selfcheck_mqag"):
                assert re.search(rf"(Running stage|Stage) '{re.escape(stage)}'( is cached)?", log), stage
        table = dvc(workspace, "exp", "show", "--json")
        assert re.search(r'"num_samples": *2\b', table) and re.search(r'"num_samples": *3\b', table)
    finally:
        dvc(workspace, "queue", "stop")


def test_nli_model_sweep_returns_to_a_scored_model_without_recomputing(workspace: Path, tmp_path: Path) -> None:
    """Swap the NLI model (the 2-label export of the offline one) and come back: the return
    is a DVC run-cache restore or an all-hit call cache, never a re-scoring."""
    other = export_two_label(workspace / "models/nli_minilm", tmp_path / "two_label")
    try:
        log = dvc(workspace, "exp", "run", "-S", f"nli.model={other}", "-S", "nli.name=two_label")
        assert "Running stage 'score_selfcheck_nli'" in log
        assert "Stage 'score_selfcheck_bertscore' didn't change, skipping" in log
        back = dvc(workspace, "exp", "run", "-S", "nli=minilm_offline")
        assert "Stage 'score_selfcheck_nli' is cached - skipping run" in back or ", 0 to compute" in back, back
    finally:
        git(workspace, "checkout", "--", ".")
        dvc(workspace, "checkout", "--force")
