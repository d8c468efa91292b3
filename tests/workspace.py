"""A throwaway copy of this repository (working tree as it is) in which DVC may run."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from hallulab.data.loaders import DATA_ROOT_ENV
from hallulab.pipeline.threads import TORCH_THREADS_ENV

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


#: A hang guard, not a timing test: CI gives one run of the whole suite 90 minutes, so a
#: subprocess still running after that long has hung (or CI has failed anyway). A correct build
#: on a slow or busy machine is never stopped by it; no test holds a shorter wall-clock limit.
HANG_GUARD_S = 90 * 60

#: One DVC cache (and run-cache) shared by every test workspace of a session, so a stage
#: that ran in one workspace (train_nli above all) is restored, not re-run, in the next.
SHARED_DVC_CACHE_ENV = "HALLULAB_TEST_DVC_CACHE"


def copy_workspace(destination: Path, overrides: tuple[str, ...] = (), keep_lock: bool = True) -> Path:
    """Copy tracked and untracked-but-not-ignored files, compose params.yaml (with Hydra
    ``overrides``), share the session's DVC cache, then make a one-commit git repo.

    The toy set selects the quick profile (quick NLI recipe, 1 MQAG question per sentence)
    by itself, as `make run` does. ``keep_lock=False`` leaves the committed dvc.lock out: a
    workspace for another data set runs each of its stages anyway (their params differ from
    the toy's), and DVC reads and rewrites the whole lock after every stage it runs, so the
    toy's entries would only make each stage slower."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for relative in filter(None, listed):
        if relative == "dvc.lock" and not keep_lock:
            continue
        source, target = REPO / relative, destination / relative
        if source.is_symlink():  # as git checks it out (src/hallulab/conf -> ../../conf)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(os.readlink(source))
        elif source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    subprocess.run(
        [
            str(BIN / "python"),
            "-c",
            "import sys; from hallulab.core.config import write_params; "
            "from pathlib import Path; write_params('params.yaml', sys.argv[1:], Path('conf'))",
            *overrides,
        ],
        cwd=destination,
        check=True,
        env=environment(),
    )
    shared_cache = os.environ.get(SHARED_DVC_CACHE_ENV)
    if shared_cache:
        (destination / ".dvc" / "config.local").write_text(f"[cache]\n    dir = {shared_cache}\n")
    git(destination, "init", "-q")
    git(destination, "add", "-A")
    git(destination, "commit", "-qm", "workspace")
    return destination


def train_nli_once(scratch: Path, overrides: tuple[str, ...] = ()) -> None:
    """Put the profile's NLI model into the session's shared DVC run-cache, training it only
    if no workspace has yet. A file lock in the shared cache serialises this across the
    pytest-xdist workers ``make test`` runs side by side (they share the cache), so the model
    trains once per test run and every later ``dvc repro`` restores it."""
    shared_cache = os.environ.get(SHARED_DVC_CACHE_ENV)
    if not shared_cache:
        return  # no shared cache: the stage that needs the model trains it in its own workspace
    Path(shared_cache).mkdir(parents=True, exist_ok=True)
    with open(Path(shared_cache) / "train_nli.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # with no data root, as in a bare clone: the quick recipe reads only data/nli_open
        dvc(copy_workspace(scratch, overrides, keep_lock=False), "repro", "train_nli", env=bare_environment())


def environment() -> dict[str, str]:
    env = dict(os.environ)
    # the stages' own thread count, as a new user's shell has it (a count exported for speed
    # would make the committed outputs come out in other bits)
    env.pop(TORCH_THREADS_ENV, None)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["DVC_NO_ANALYTICS"] = "1"
    env.setdefault("GIT_AUTHOR_NAME", "hallulab-test")
    env.setdefault("GIT_AUTHOR_EMAIL", "test@hallulab")
    env.setdefault("GIT_COMMITTER_NAME", "hallulab-test")
    env.setdefault("GIT_COMMITTER_EMAIL", "test@hallulab")
    return env


def bare_environment() -> dict[str, str]:
    """:func:`environment` without a data root, as a clone with nothing beside it has it."""
    env = environment()
    env.pop(DATA_ROOT_ENV, None)
    return env


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=environment()).stdout


def dvc(cwd: Path, *args: str, timeout: float = HANG_GUARD_S, env: dict[str, str] | None = None) -> str:
    """Run dvc (in :func:`environment` unless ``env`` is given); on failure raise with its
    output (stdout + stderr)."""
    done = subprocess.run(
        [str(BIN / "dvc"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env if env is not None else environment(),
        timeout=timeout,
    )
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise AssertionError(f"dvc {' '.join(args)} failed ({done.returncode}):\n{output}")
    return output


def drop_stage_outputs(root: Path, keep: frozenset[str] = frozenset({"train_nli"})) -> list[str]:
    """Delete the committed outputs (metrics, plots, provenance) of every stage in ``root``'s
    dvc.lock but the always-run stages and ``keep`` (train_nli: restored from the session's
    shared run-cache), so that the next ``dvc repro`` runs every one of those stages.

    Without it, which stages run depends on the CPU: a stage whose dependencies come out in
    the committed bits finds its committed outputs current and is skipped, so a test of what
    the stages ran would see a different set of stages on every kind of CPU. Returns the
    deleted paths, relative to ``root``."""
    always = {
        name
        for name, stage in yaml.safe_load((root / "dvc.yaml").read_text())["stages"].items()
        if stage.get("always_changed")
    }
    dropped = []
    for name, stage in yaml.safe_load((root / "dvc.lock").read_text())["stages"].items():
        if name in always or name in keep:
            continue
        for out in stage.get("outs", []):
            target = root / out["path"]
            if target.is_file():
                target.unlink()
                dropped.append(out["path"])
            elif target.is_dir():
                shutil.rmtree(target)
                dropped.append(out["path"])
    return dropped
