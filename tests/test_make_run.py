"""The README's first command, `make run`, in a copy of the repository (the installed venv reused)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.workspace import copy_workspace, environment

pytestmark = pytest.mark.slow
VENV = Path(sys.executable).parent.parent


@pytest.mark.skipif(
    not (VENV / ".hallulab-installed").exists() and not os.environ.get("CI"),
    reason="needs the venv that `make install` created",
)
def test_make_run_reproduces_the_dag_and_writes_offline_plots(tmp_path: Path) -> None:
    root = copy_workspace(tmp_path / "ws")
    env = environment()
    # as a new user's shell: the venv is *not* on PATH; the Makefile must put it there
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if Path(p) != VENV / "bin")
    done = subprocess.run(
        ["make", "run", f"VENV={VENV}"], cwd=root, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    metrics = json.loads((root / "metrics/toy/selfcheck_ngram.json").read_text())
    assert "ngram_n1_max" in metrics
    assert (root / "dvc_plots/index.html").is_file() and (root / "dvc_plots/vendor/vega.min.js").is_file()
