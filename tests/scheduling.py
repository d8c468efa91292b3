"""How ``make test`` shares the suite between its pytest-xdist workers.

A *unit* is a run of tests that one worker takes together, in order: every test that uses the
toy DAG (the ``toy_run`` session fixture, one ``make run`` on the worker that builds it) is one
unit; every other test module is a unit of its own, so that its module-scoped fixtures (the
WikiBio reproduction, the real-data slices, a loaded model) are built once. A worker takes the
next unit when it runs out of work, and the longest units come first (:data:`FIRST_UNITS`),
so that neither worker starts a long one while the other is about to finish.

pytest-xdist's own grouping (``--dist loadgroup`` with ``xdist_group`` marks) renames test ids,
which pytest 9 no longer honours: the groups are lost and every test becomes a unit, so both
workers would build the toy DAG. Here the workers record each test's unit in a file named by
:data:`UNITS_FILE_ENV` when they finish collecting, and :class:`UnitScheduling`, the
controller's scheduler for ``--dist loadscope``, reads it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

#: The file the workers write {test id: unit} to (set by the controller before they start).
UNITS_FILE_ENV = "HALLULAB_TEST_UNITS_FILE"

#: The unit of every test that uses the toy DAG.
TOY_DAG_UNIT = "toy_dag"

#: The longest units, in the order they start: the toy DAG and the WikiBio reproduction take a
#: worker each from the start, then the real-data slices; the other modules follow in
#: collection order.
FIRST_UNITS = (TOY_DAG_UNIT, "tests/test_wikibio_reproduction.py", "tests/test_real_slices.py")


def uses_toy_dag(item: pytest.Item) -> bool:
    return "toy_run" in getattr(item, "fixturenames", ())


def unit_of(item: pytest.Item) -> str:
    """The toy DAG's unit, else the test's module (its id up to the first ``::``)."""
    return TOY_DAG_UNIT if uses_toy_dag(item) else module_of(item.nodeid)


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def first_units_first(items: list[pytest.Item]) -> None:
    """Sort ``items`` in place: the units of :data:`FIRST_UNITS` first, in that order; every
    other test keeps its place relative to the rest."""
    rank = {unit: index for index, unit in enumerate(FIRST_UNITS)}
    items.sort(key=lambda item: rank.get(unit_of(item), len(rank)))


def record_units(items: Sequence[pytest.Item]) -> None:
    """Write {test id: unit} to the file :data:`UNITS_FILE_ENV` names (nothing when unset).
    Each worker writes the same content; the file is replaced whole, never half-written."""
    target = os.environ.get(UNITS_FILE_ENV)
    if not target:
        return
    partial = Path(f"{target}.{os.getpid()}")
    partial.write_text(json.dumps({item.nodeid: unit_of(item) for item in items}), encoding="utf-8")
    os.replace(partial, target)


def make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist's scope scheduler with this suite's units as the scopes."""
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):  # type: ignore[misc]
        """Hands out whole units; a test id the workers did not record is its module's."""

        units: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.units is None:
                self.units = json.loads(Path(os.environ[UNITS_FILE_ENV]).read_text(encoding="utf-8"))
            return self.units.get(nodeid) or module_of(nodeid)

    return UnitScheduling(config, log)
