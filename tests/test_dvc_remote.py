"""Artifacts shared through a DVC remote (docs/how-to/scale.md): a second workspace that pulls
from the first one's remote (`make pull`: `dvc pull --run-cache`, checked) runs `dvc repro` on
the toy set with no stage of the pipeline executed, and a knob value the first workspace ran is
restored from the pulled run-cache (`dvc exp run --pull`): no model is called, only the stages
that write metrics (arithmetic over the stored scores) run again. The
remote is a local folder; an S3 or GCS remote differs only in its URL. Only the three
fingerprint stages (code_files, data_files, source: always_changed, they read the code and data
to decide what else must run) execute every time, by design.

A damaged object in the remote (one byte changed, size kept) is named by the documented pull
(`make pull`, with the remote's `verify` on), with the remote, and nothing is checked out: a
good local copy stays as it was."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import VENV, ToyRun
from tests.workspace import HANG_GUARD_S, bare_environment, dvc, git

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


def _colleague(source: Path, destination: Path, cache: Path, remote: Path) -> Path:
    """A clone of ``source`` with a DVC cache of its own (``cache``), set up to pull from
    ``remote`` as docs/how-to/scale.md says: the team's default remote, with verify on."""
    _clone(source, destination, cache)
    dvc(destination, "remote", "add", "--local", "--default", "team", str(remote))
    dvc(destination, "remote", "modify", "--local", "team", "verify", "true")
    return destination


def _make_pull(workspace: Path, env: dict[str, str], targets: str = "") -> subprocess.CompletedProcess[str]:
    """The documented pull, `make pull` (with the run-cache), in ``workspace``."""
    # -o: the venv is installed already; never re-point its editable install at this clone
    return subprocess.run(
        ["make", "-o", f"{VENV}/.hallulab-installed", "pull", f"VENV={VENV}", f"TARGETS={targets}"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )


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
    second_ws = _colleague(toy_run.root, second / "ws", second / "dvc-cache", remote)
    pulled = _make_pull(second_ws, env)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    log = dvc(second_ws, "repro", env=env)
    assert _executed(log) == FINGERPRINT_STAGES, log[-3000:]
    assert "Stage 'score_selfcheck_nli' didn't change, skipping" in log

    # the first workspace's knob value: what its run-cache restores is restored, the outputs
    # pulled as they are restored (--pull); the stages that write metrics, whose metric files are
    # git's (cache: false) and not in the remote, run again: arithmetic over the stored scores
    # (the aggregate stages and the summary), never a model call
    log = dvc(second_ws, "exp", "run", "--pull", "-S", "selfcheck_ngram.n=2", env=env)
    executed = _executed(log) - FINGERPRINT_STAGES
    assert executed and all(name.startswith("aggregate_") or name == "summary" for name in executed), log[-3000:]
    assert "Stage 'score_selfcheck_ngram' didn't change, skipping" in log
    assert re.search(r"Stage 'members_ensemble@\d' is cached - skipping run, checking out outputs", log), log[-3000:]
    metrics = json.loads((second_ws / "metrics/toy/selfcheck_ngram.json").read_text())
    assert set(metrics) == {"ngram_n2_avg", "ngram_n2_max"}


def _md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def _damage_one_byte(path: Path) -> None:
    """Change one byte of ``path``, its size and mode kept. A new file takes its place, so that a
    cache sharing the object's storage (a link) keeps its good copy. The mode matters: DVC reads
    an object of a local-folder remote whose mode is not its read-only one as suspect, hashes it
    while listing the remote, and deletes it there if damaged; a read-only one it trusts."""
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    damaged = path.with_name(path.name + ".damaged")
    damaged.write_bytes(bytes(data))
    os.chmod(damaged, path.stat().st_mode)
    os.replace(damaged, path)


def test_a_damaged_object_in_the_remote_is_named_and_the_good_local_copy_kept(toy_run: ToyRun, tmp_path: Path) -> None:
    env = bare_environment()
    remote = tmp_path / "remote"
    remote.mkdir()
    prepared = "data/prepared/toy/passages.jsonl"
    lock = yaml.safe_load((toy_run.root / "dvc.lock").read_text())
    md5 = next(out["md5"] for out in lock["stages"]["prepare"]["outs"] if out["path"] == prepared)

    # the first workspace pushes the prepare stage's output (all this test pulls), then one
    # byte of the remote's object changes
    shared_cache = Path(dvc(toy_run.root, "cache", "dir").strip())
    first = _clone(toy_run.root, tmp_path / "first", shared_cache)
    dvc(first, "remote", "add", "--local", "--default", "team", str(remote))
    dvc(first, "push", "prepare", env=env)
    remote_object = remote / "files" / "md5" / md5[:2] / md5[2:]
    pushed = remote_object.stat()
    _damage_one_byte(remote_object)
    assert remote_object.stat().st_size == pushed.st_size and _md5(remote_object) != md5
    assert remote_object.stat().st_mode == pushed.st_mode  # read-only, as DVC pushed it

    # a colleague's clone, set up as docs/how-to/scale.md says, with an empty DVC cache of its
    # own and a good copy of the file in the workspace; it pulls only what the remote holds
    cache = tmp_path / "second-cache"
    second = _colleague(toy_run.root, tmp_path / "second", cache, remote)
    (second / prepared).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(toy_run.root / prepared, second / prepared)
    assert _md5(second / prepared) == md5

    done = _make_pull(second, env, targets="prepare")
    errors = [line for line in done.stderr.splitlines() if line.startswith("make pull: error: ")]
    assert done.returncode != 0 and len(errors) == 1, done.stdout + done.stderr
    assert "pull] Error 2" in done.stderr, done.stderr  # the command's own exit status, as make reports it
    (error,) = errors
    for named in (prepared, md5, "remote 'team'", str(remote), "damaged", "the workspace copy matches it and is kept"):
        assert named in error, (named, error)
    assert _md5(second / prepared) == md5  # the good local copy, kept
    assert not (cache / "files" / "md5" / md5[:2] / md5[2:]).exists()  # no damaged bytes cached under the good md5
