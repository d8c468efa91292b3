"""`make run`'s closing report on committed outputs (hallulab.dag.committed_outputs), on a real
git repository: nothing changed, last-digit float changes, and a change past the tolerance."""

from __future__ import annotations

import json
from pathlib import Path

from hallulab.dag.committed_outputs import (
    Drift,
    changed_input,
    compare,
    drift,
    lock_inputs,
    main,
    report,
    restore_command,
)
from tests.workspace import REPO, dvc, git

LOCK = """schema: '2.0'
stages:
  code_files:
    cmd: python -m hallulab.dag.code_manifests
    outs:
    - path: data/code_files/evaluate.json
      hash: md5
      md5: c0de
  train_nli:
    cmd: python stages/train_nli.py
    deps:
    - path: data/code_files/evaluate.json
      hash: md5
      md5: c0de
    params:
      params.yaml:
        nli_train.epochs: 1
    outs:
    - path: models/nli
      hash: md5
      md5: e220c859.dir
  evaluate@ccp:
    cmd: python stages/evaluate.py
    deps:
    - path: data/code_files/evaluate.json
      hash: md5
      md5: c0de
    - path: models/nli
      hash: md5
      md5: e220c859.dir
    params:
      params.yaml:
        ccp.alpha: 0.5
    outs:
    - path: metrics/toy/ccp.json
      hash: md5
      md5: 0
    - path: metrics/toy/pr/ccp.csv
      hash: md5
      md5: 0
"""


def _repo(tmp_path: Path) -> Path:
    (tmp_path / "metrics/toy/pr").mkdir(parents=True)
    (tmp_path / "dvc.lock").write_text(LOCK)
    (tmp_path / "metrics/toy/ccp.json").write_text(json.dumps({"ccp": {"passage_pearson": 16.2315, "n": None}}))
    (tmp_path / "metrics/toy/pr/ccp.csv").write_text("task,recall,precision\nclaim,0.5,0.25\n")
    (tmp_path / "notes.txt").write_text("not an output\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "outputs")
    return tmp_path


def test_a_run_that_changed_nothing_says_so(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "notes.txt").write_text("edited, but not an output\n")
    found = drift(root)
    assert found.checked == 3 and found.changes == ()
    assert report(found) == "committed outputs: all 3 came out as committed"


def test_last_digit_changes_are_named_measured_and_restorable(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "metrics/toy/ccp.json").write_text(json.dumps({"ccp": {"passage_pearson": 16.2314, "n": None}}))
    (root / "metrics/toy/pr/ccp.csv").write_text("task,recall,precision\nclaim,0.5,0.25005\n")
    text = report(drift(root))
    assert "2 of 3 differ" in text
    assert "(ccp.passage_pearson: 16.2315 -> 16.2314)" in text
    assert "Nothing failed" in text and "more than float rounding" not in text
    assert " ".join(text.split()).endswith("git checkout -- metrics/toy/ccp.json metrics/toy/pr/ccp.csv")
    assert all(len(line) <= 100 for line in text.splitlines())
    assert main(["--root", str(root)]) == 0


def _one_line(text: str) -> str:
    return " ".join(line.strip() for line in text.splitlines())


def test_a_change_with_a_changed_input_is_not_called_rounding(tmp_path: Path) -> None:
    """A param, code manifest or data fingerprint of dvc.lock that is not the commit's: the run
    computed something else, whatever the size of the change."""
    root = _repo(tmp_path)
    (root / "dvc.lock").write_text(LOCK.replace("ccp.alpha: 0.5", "ccp.alpha: 0.7"))
    (root / "metrics/toy/ccp.json").write_text(json.dumps({"ccp": {"passage_pearson": 16.2314, "n": None}}))
    text = _one_line(report(drift(root)))
    assert "evaluate@ccp: params in dvc.lock" in text
    assert "computed something else than the commit" in text and "round differently" not in text
    (root / "dvc.lock").write_text(LOCK.replace("md5: c0de", "md5: c0de2"))
    text = _one_line(report(drift(root)))
    assert "code_files: data/code_files/evaluate.json in dvc.lock" in text
    assert "computed something else than the commit" in text


def test_same_inputs_with_a_new_model_hash_are_this_cpu_rounding(tmp_path: Path) -> None:
    """The trained model came out with other bits (its hash in dvc.lock and in a metrics file),
    every number moved by less than the gate's tolerance: rounding, nothing to commit."""
    root = _repo(tmp_path)
    curve = root / "metrics/toy/pr/ccp.csv"
    curve.write_text("task,recall,precision,model\nclaim,0.5,0.25,e220c859\n")
    git(root, "commit", "-qam", "the model's id")
    (root / "dvc.lock").write_text(LOCK.replace("e220c859.dir", "4b29f708.dir").replace("md5: 0", "md5: 1"))
    (root / "metrics/toy/ccp.json").write_text(json.dumps({"ccp": {"passage_pearson": 16.2284, "n": None}}))
    curve.write_text("task,recall,precision,model\nclaim,0.5,0.25,4b29f708\n")
    found = drift(root)
    assert found.inputs_compared and found.changed_input is None
    text = _one_line(report(found))
    assert "computed something else" not in text and "more than float rounding" not in text
    assert "this CPU's float kernels round differently" in text
    assert "largest change of a number: 0.0031 in metrics/toy/ccp.json" in text
    assert "within the CI gate's tolerance of 0.01" in text and "nothing needs committing" in text
    assert all(len(line) <= 100 for line in report(found).splitlines())
    past = _one_line(report(found, tolerance=0.001))
    assert "past the CI gate's tolerance of 0.001" in past and "Nothing needs committing" in past
    assert "computed something else" not in past


def test_without_a_readable_committed_lock_a_large_change_is_not_called_rounding(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "metrics/toy/ccp.json").write_text(json.dumps({"ccp": {"passage_pearson": 18.0, "n": None}}))
    found = drift(root)
    unknown = Drift(found.checked, found.changes)
    assert "more than float rounding" in report(unknown)
    (root / "metrics/toy/ccp.json").write_text(json.dumps({"ccp": {"passage_pearson": 16.2315, "n": 3}}))
    found = drift(root)
    text = report(Drift(found.checked, found.changes))
    assert "ccp.n: None -> 3" in text and "more than float rounding" in text


def test_lock_inputs_leave_out_what_stages_compute() -> None:
    inputs = lock_inputs(LOCK)
    assert inputs is not None
    assert "code_files: data/code_files/evaluate.json" in inputs and "evaluate@ccp: params" in inputs
    assert "evaluate@ccp: data/code_files/evaluate.json" not in inputs
    assert not any("metrics/" in key or "models/" in key for key in inputs)
    assert changed_input(LOCK, LOCK.replace("md5: 0", "md5: 9")) == (True, None)
    assert changed_input("", LOCK) == (False, None)


def test_compare_reports_added_keys_as_a_change_of_shape() -> None:
    change = compare("m.json", json.dumps({"a": 1.0}), json.dumps({"a": 1.0, "b": 2.0}))
    assert change.largest is None and "added ['b']" in change.where


def test_outside_git_there_is_nothing_to_compare(tmp_path: Path) -> None:
    assert report(drift(tmp_path)) == "committed outputs: none to compare (no dvc.lock in git)"


def test_the_restore_command_fits_one_line() -> None:
    many = [f"metrics/toy/m{i}.json" for i in range(20)] + ["dvc.lock", "metrics/toy/pr/a.csv"]
    command = restore_command(many)
    assert command == "git checkout -- dvc.lock metrics/toy metrics/toy/pr"
    assert restore_command(["dvc.lock"]) == "git checkout -- dvc.lock"


def test_a_long_list_of_changed_files_is_cut_and_counted(tmp_path: Path) -> None:
    from hallulab.dag.committed_outputs import LISTED, Drift, FileChange

    changes = tuple(FileChange(f"metrics/toy/m{i}.json", None, "shape: added ['x']", "", "") for i in range(10))
    text = report(Drift(20, changes))
    assert text.count("shape: added") == LISTED and f"and {10 - LISTED} more files" in text


def test_dvc_repro_leaves_the_git_index_as_it_was(tmp_path: Path) -> None:
    """`make run`'s `dvc repro`, under the project's .dvc/config, rewrites dvc.lock (and a
    .gitignore) in the working tree only: nothing is staged (DVC's autostage is off)."""
    git(tmp_path, "init", "-q")
    dvc(tmp_path, "init", "-q")
    (tmp_path / ".dvc" / "config").write_text((REPO / ".dvc" / "config").read_text())
    (tmp_path / "dvc.yaml").write_text("stages:\n  one:\n    cmd: echo one > out.txt\n    outs:\n    - out.txt\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "pipeline")
    dvc(tmp_path, "repro", "-q")
    assert (tmp_path / "dvc.lock").is_file()
    assert git(tmp_path, "diff", "--cached", "--name-only") == ""


MEMBERS_LOCK = """schema: '2.0'
stages:
  members_ensemble@0:
    cmd: python stages/member.py --method ccp
    deps:
    - path: data/aggregated/toy/ccp.parquet
      hash: md5
      md5: a1
    outs:
    - path: data/members/toy/ensemble/ccp.k10.parquet
      hash: md5
      md5: a2
  aggregate_ensemble:
    cmd: python stages/aggregate.py --method ensemble
    deps:
    - path: conf/prompts/judge.yaml
      hash: md5
      md5: b1
    - path: data/members/toy/ensemble
      hash: md5
      md5: a3.dir
    outs:
    - path: data/aggregated/toy/ensemble.parquet
      hash: md5
      md5: a4
"""


def test_a_folder_of_a_foreach_stage_outputs_is_computed_not_an_input() -> None:
    """A combining stage reads the folder its member stages write file by file: the folder's hash
    follows from theirs, so a member's new bits (a retrained NLI model upstream) are rounding, not
    a changed input; a file no stage makes (a prompt) stays an input."""
    inputs = lock_inputs(MEMBERS_LOCK)
    assert inputs is not None
    assert "aggregate_ensemble: data/members/toy/ensemble" not in inputs
    assert "aggregate_ensemble: conf/prompts/judge.yaml" in inputs
    rounded = MEMBERS_LOCK.replace("a2", "c2").replace("a3.dir", "c3.dir").replace("a1", "c1")
    assert changed_input(MEMBERS_LOCK, rounded) == (True, "members_ensemble@0: data/aggregated/toy/ccp.parquet")
    rounded_downstream = MEMBERS_LOCK.replace("a2", "c2").replace("a3.dir", "c3.dir")
    assert changed_input(MEMBERS_LOCK, rounded_downstream) == (True, None)
    assert changed_input(MEMBERS_LOCK, MEMBERS_LOCK.replace("b1", "b9")) == (
        True,
        "aggregate_ensemble: conf/prompts/judge.yaml",
    )
