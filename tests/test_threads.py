"""Every stage runs torch on the same thread count, whatever the machine's cores or the
environment's OpenMP setting (hallulab.pipeline.threads)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hallulab.core.config import ConfigError
from hallulab.pipeline.threads import TORCH_THREADS_ENV, stage_torch_threads
from tests.workspace import REPO, environment

PROBE = (
    "import sys; from hallulab.pipeline.runner import run_stage; "
    "import torch; run_stage('probe', lambda: print(torch.get_num_threads()))"
)
PROBE_TORCH_LATER = (
    "from hallulab.pipeline.runner import run_stage\n"
    "def main():\n    import torch\n    print(torch.get_num_threads())\n"
    "run_stage('probe', main)"
)


def _stage_threads(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env={**environment(), **env}, capture_output=True, text=True
    )


def test_the_stage_thread_count_defaults_to_two_and_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TORCH_THREADS_ENV, raising=False)
    assert stage_torch_threads() == 2
    monkeypatch.setenv(TORCH_THREADS_ENV, "3")
    assert stage_torch_threads() == 3
    monkeypatch.setenv(TORCH_THREADS_ENV, "0")
    assert stage_torch_threads() == 0
    for bad in ("two", "²", "-1"):
        monkeypatch.setenv(TORCH_THREADS_ENV, bad)
        with pytest.raises(ConfigError, match=TORCH_THREADS_ENV):
            stage_torch_threads()


@pytest.mark.parametrize("code", [PROBE, PROBE_TORCH_LATER], ids=["torch imported first", "torch imported later"])
def test_a_stage_runs_torch_on_the_fixed_count_whatever_openmp_says(code: str) -> None:
    done = _stage_threads(code, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2"]
    done = _stage_threads(code, OMP_NUM_THREADS="2", **{TORCH_THREADS_ENV: "1"})
    assert done.stdout.split() == ["1"], done.stderr


def test_a_bad_thread_count_is_one_line_naming_the_variable() -> None:
    done = _stage_threads(PROBE_TORCH_LATER, **{TORCH_THREADS_ENV: "-1"})
    assert done.returncode == 2 and done.stdout == ""
    first = done.stderr.splitlines()[0]
    assert first.startswith("hallulab probe: error: HALLULAB_TORCH_THREADS='-1'"), done.stderr
