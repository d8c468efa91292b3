"""``make test``'s units hold under ``--dist loadgroup``: every test of a unit runs on one
worker. pytest-xdist 3.8 keeps a group in the test id, which pytest 9.2 stopped honouring
(pytest-dev/pytest-xdist#1386), so this fails, rather than the suite silently building the
toy DAG on both workers, if the pin in pyproject.toml is lifted too early."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PROBE = """
import os, pytest

@pytest.mark.parametrize("i", range(6))
def test_probe(i):
    with open(os.environ["PROBE_LOG"], "a") as log:
        log.write(f"{__name__} {os.environ['PYTEST_XDIST_WORKER']}\\n")
"""

CONFTEST = """
import pytest
from tests.scheduling import unit_of

def pytest_itemcollected(item):
    item.add_marker(pytest.mark.xdist_group(unit_of(item)))
"""


def test_loadgroup_keeps_each_unit_on_one_worker(tmp_path: Path) -> None:
    for name in ("test_probe_a.py", "test_probe_b.py", "test_probe_c.py"):
        (tmp_path / name).write_text(PROBE)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    log = tmp_path / "log.txt"
    env = {**os.environ, "PROBE_LOG": str(log), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    workers: dict[str, set[str]] = {}
    for line in log.read_text().splitlines():
        module, worker = line.split()
        workers.setdefault(module, set()).add(worker)
    assert set(workers) == {"test_probe_a", "test_probe_b", "test_probe_c"}
    assert all(len(found) == 1 for found in workers.values()), workers
