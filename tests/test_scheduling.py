"""``make test``'s units hold under ``--dist loadgroup``: every test of a unit runs on one
worker. pytest-xdist 3.8 keeps a group in the test id, which pytest 9.2 stopped honouring
(pytest-dev/pytest-xdist#1386), so this fails, rather than the suite silently building a
module's fixtures (the WikiBio reproduction, a slice's DVC run) on both workers, if the pin in
pyproject.toml is lifted too early."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def test_the_long_units_start_first_and_the_toy_runs_users_come_last() -> None:
    """The order units are handed out in: FIRST_UNITS, then modules that do not use the toy run,
    then those that do; each keeps its tests' collection order."""
    from types import SimpleNamespace

    from tests.scheduling import FIRST_UNITS, units_in_order

    def item(module: str, name: str, toy: bool = False) -> Any:
        return SimpleNamespace(nodeid=f"{module}::{name}", fixturenames=("toy_run",) if toy else ())

    items = [
        item("tests/test_a.py", "one", toy=True),
        item("tests/test_a.py", "two"),
        item("tests/test_b.py", "one"),
        item(FIRST_UNITS[1], "one"),
        item(FIRST_UNITS[0], "one", toy=True),
        item("tests/test_c.py", "one"),
    ]
    units_in_order(items)
    assert [i.nodeid for i in items] == [
        f"{FIRST_UNITS[0]}::one",
        f"{FIRST_UNITS[1]}::one",
        "tests/test_b.py::one",
        "tests/test_c.py::one",
        "tests/test_a.py::one",
        "tests/test_a.py::two",
    ]
