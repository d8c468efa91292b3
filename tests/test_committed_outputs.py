"""`make run`'s closing report on committed outputs (hallulab.dag.committed_outputs), on a real
git repository: nothing changed, last-digit float changes, and a change past the tolerance."""

from __future__ import annotations

import json
from pathlib import Path

from hallulab.dag.committed_outputs import compare, drift, main, report, restore_command
from tests.workspace import git

LOCK = """schema: '2.0'
stages:
  evaluate@ccp:
    cmd: python stages/evaluate.py
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


def test_a_change_past_the_tolerance_or_of_shape_is_not_called_rounding(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "metrics/toy/ccp.json").write_text(json.dumps({"ccp": {"passage_pearson": 18.0, "n": None}}))
    assert "more than float rounding" in report(drift(root))
    (root / "metrics/toy/ccp.json").write_text(json.dumps({"ccp": {"passage_pearson": 16.2315, "n": 3}}))
    text = report(drift(root))
    assert "ccp.n: None -> 3" in text and "more than float rounding" in text


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
