"""Artifacts shared through a DVC remote (docs/how-to/scale.md): a second workspace that pulls
from the first one's remote (`dvc pull --run-cache`) runs `dvc repro` on the toy set with no
stage of the pipeline executed, and a knob value the first workspace ran is restored from the
pulled run-cache (`dvc exp run --pull`), only the metrics recomputed. The remote is a local
folder; an S3 or GCS remote differs only in its URL. Only the three fingerprint stages
(code_files, data_files, source: always_changed, they read the code and data to decide what
else must run) execute every time, by design."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import ToyRun
from tests.workspace import bare_environment, dvc, git

pytestmark = [pytest.mark.slow]

#: The stages that run on every `dvc repro` (always_changed in dvc.yaml): they fingerprint.
FINGERPRINT_STAGES = {"code_files", "data_files", "source"}


def _executed(log: str) -> set[str]:
    return set(re.findall(r"Running stage '([^']+)'", log))


def _clone(source: Path, destination: Path, cache: Path) -> Path:
    """A git clone of ``source`` whose DVC cache is ``cache``."""
    git(destination.parent, "clone", "-q", str(source), destination.name)
    dvc(destination, "cache", "dir", "--local", str(cache))
    return destination


def test_a_workspace_that_pulls_a_remote_reproduces_with_no_stage_run(toy_run: ToyRun, tmp_path: Path) -> None:
    env = bare_environment()  # as a stranger's clone: no data root beside it
    remote = tmp_path / "remote"
    remote.mkdir()

    # the first workspace: the toy run's commit and DVC cache; it pushes its outputs, then runs
    # one more knob value and pushes the run-cache that records it
    first = tmp_path / "first"
    first.mkdir()
    shared_cache = dvc(toy_run.root, "cache", "dir").strip()
    first_ws = _clone(toy_run.root, first / "ws", Path(shared_cache))
    dvc(first_ws, "remote", "add", "--local", "--default", "team", str(remote))
    dvc(first_ws, "checkout", env=env)
    dvc(first_ws, "push", env=env)
    log = dvc(first_ws, "exp", "run", "-S", "selfcheck_ngram.n=2", env=env)
    # run here, or restored from the session's shared run-cache where another test ran it first
    assert re.search(r"(Running stage|Stage) 'aggregate_selfcheck_ngram'( is cached)?", log), log[-3000:]
    dvc(first_ws, "push", "--run-cache", env=env)

    # the second workspace: a clone with an empty DVC cache of its own
    second = tmp_path / "second"
    second.mkdir()
    second_ws = _clone(toy_run.root, second / "ws", second / "dvc-cache")
    dvc(second_ws, "remote", "add", "--local", "--default", "team", str(remote))
    dvc(second_ws, "pull", "--run-cache", env=env)
    log = dvc(second_ws, "repro", env=env)
    assert _executed(log) == FINGERPRINT_STAGES, log[-3000:]
    assert "Stage 'score_selfcheck_nli' didn't change, skipping" in log

    # the first workspace's knob value: its stages are restored from the run-cache, their outputs
    # pulled as they are restored (--pull); the metrics stages, whose outputs are git's
    # (cache: false) and not in the remote, recompute them (arithmetic over the restored scores)
    log = dvc(second_ws, "exp", "run", "--pull", "-S", "selfcheck_ngram.n=2", env=env)
    executed = _executed(log) - FINGERPRINT_STAGES
    assert executed and all(name.startswith("evaluate@") or name == "summary" for name in executed), log[-3000:]
    for stage in ("aggregate_selfcheck_ngram", "aggregate_ensemble"):
        assert f"Stage '{stage}' is cached - skipping run, checking out outputs" in log, stage
    metrics = json.loads((second_ws / "metrics/toy/selfcheck_ngram.json").read_text())
    assert set(metrics) == {"ngram_n2_avg", "ngram_n2_max"}
