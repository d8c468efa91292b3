"""A benchmark cell leaves the tracked files it does not publish as it found them: its run's
``dvc exp run`` rewrites params.yaml (the cell's settings) and dvc.lock (its stages), and the cell
puts both back when it ends, failed or interrupted too; `make result` names them in one line with
the command that restores them. The DVC call is replaced by a function that rewrites the files
as the run does: the restore logic is the production code path's."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from hallulab.benchmark import runs as runs_module
from hallulab.benchmark.runs import CellRun, make_runner
from hallulab.results.published import main as results_main
from hallulab.results.run_files import RUN_FILES, kept_as_found, note
from tests.workspace import REPO, git

PARAMS = "dataset:\n  name: toy\nprofile:\n  name: quick\n"
LOCK = "schema: '2.0'\nstages: {}\n"
RUN = CellRun("nq_open", "selfcheck_ngram", ("dataset.limit=40",), False, ("sentence",), ("ngram_n1_max",))


def _checkout(tmp_path: Path) -> Path:
    (tmp_path / "params.yaml").write_text(PARAMS)
    (tmp_path / "dvc.lock").write_text(LOCK)
    (tmp_path / "README.md").write_text("readme\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "checkout")
    return tmp_path


def _dvc_like(status: int = 0, error: BaseException | None = None) -> Callable[[Sequence[str], Path], int]:
    """What `make result` does to the checkout: the paper profile into params.yaml, the run's
    stages into dvc.lock; then it exits with ``status`` or raises ``error``."""

    def call(arguments: Sequence[str], root: Path) -> int:
        assert arguments[:2] == ["make", "result"] and f"DATASET={RUN.dataset}" in arguments
        (root / "params.yaml").write_text(PARAMS.replace("toy", "nq_open").replace("quick", "paper"))
        (root / "dvc.lock").write_text(LOCK.replace("{}", "{aggregate_selfcheck_ngram: {}}"))
        if error is not None:
            raise error
        return status

    return call


@pytest.fixture
def exported(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The units and cost steps, recording the params.yaml they ran under."""
    seen: list[str] = []

    def export(dataset: str, method: str, levels: object, variants: object, destination: Path, root: Path) -> int:
        seen.append((root / "params.yaml").read_text())
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text("# level: sentence\nvariant,record,unit,positive,score\n")
        return 0

    monkeypatch.setattr(runs_module, "export_cell_units", export)
    monkeypatch.setattr(runs_module, "cell_cost", lambda *args: None)
    monkeypatch.setattr(runs_module, "write_cell_cost", lambda path, cost: path.write_text("{}"))
    return seen


def test_a_cell_puts_params_and_lock_back_after_its_run(
    tmp_path: Path, exported: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    root = _checkout(tmp_path)
    assert make_runner(root, call=_dvc_like())(RUN) == 0
    assert exported and "paper" in exported[0], "the units are read under the run's own settings"
    assert (root / "params.yaml").read_text() == PARAMS and (root / "dvc.lock").read_text() == LOCK
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
    assert "params.yaml, dvc.lock put back as they were before the cell" in capsys.readouterr().out


@pytest.mark.parametrize("error", [None, KeyboardInterrupt(), SystemExit(128 + signal.SIGTERM), RuntimeError("x")])
def test_a_failed_or_interrupted_cell_puts_them_back_too(
    tmp_path: Path, exported: list[str], error: BaseException | None
) -> None:
    root = _checkout(tmp_path)
    (root / "params.yaml").write_text(PARAMS + "# an edit of the user's, not committed\n")
    before = (root / "params.yaml").read_bytes()
    runner = make_runner(root, call=_dvc_like(status=2, error=error))
    if error is None:
        assert runner(RUN) == 2
    else:
        with pytest.raises(type(error)):
            runner(RUN)
    assert not exported
    assert (root / "params.yaml").read_bytes() == before and (root / "dvc.lock").read_text() == LOCK


def test_another_tracked_file_the_run_changed_is_named_with_its_restore_command(
    tmp_path: Path, exported: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    root = _checkout(tmp_path)
    dvc_like = _dvc_like()

    def call(arguments: Sequence[str], root: Path) -> int:
        (root / "README.md").write_text("rewritten\n")
        return dvc_like(arguments, root)

    make_runner(root, call=call)(RUN)
    out = capsys.readouterr().out
    assert "README.md: changed by the cell's run, not published; `git checkout -- README.md`" in out


def test_kept_as_found_removes_a_file_that_was_not_there(tmp_path: Path) -> None:
    with kept_as_found(tmp_path) as restored:
        (tmp_path / "dvc.lock").write_text(LOCK)
    assert restored == ["dvc.lock"] and not (tmp_path / "dvc.lock").exists()


def test_make_result_ends_naming_the_files_its_run_rewrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _checkout(tmp_path)
    assert note(root) is None
    _dvc_like()(["make", "result", f"DATASET={RUN.dataset}"], root)
    line = note(root)
    assert line is not None and len(line.splitlines()) == 1
    assert line.startswith("params.yaml, dvc.lock: now describe this run")
    assert line.endswith("`git checkout -- params.yaml dvc.lock` restores the committed ones")
    monkeypatch.chdir(root)
    assert results_main(["run-files"]) == 0 and capsys.readouterr().out.strip() == line
    assert set(RUN_FILES) == {"params.yaml", "dvc.lock"}


def test_make_results_recipe_says_it_after_a_failed_run_too() -> None:
    """The recipe's shell names the files in its EXIT trap, so a failing `dvc exp run` (or an
    interrupt) still ends with the line."""
    recipe = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-n",
            "-o",
            ".venv/.hallulab-installed",
            "result",
            "DATASET=nq_open",
            "METHOD=length",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    first = recipe.splitlines()[0]
    assert first.startswith("trap '") and first.endswith("python -m hallulab.results run-files' EXIT; \\")
