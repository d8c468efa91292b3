"""How ``make test`` shares the suite between its pytest-xdist workers (``--dist loadgroup``).

A *unit* is a run of tests that one worker takes together: every test that uses the toy DAG
(the ``toy_run`` session fixture, one ``make run`` on the worker that builds it) is one unit;
every other test module is a unit of its own, so that its module-scoped fixtures (the WikiBio
reproduction, the real-data slices, a loaded model) are built once. Each test carries its unit
as pytest-xdist's ``xdist_group`` mark (added at collection, :func:`unit_of`); a worker takes
the next unit when it runs out of work, and the longest units come first
(:data:`FIRST_UNITS`, with ``--no-loadscope-reorder``), so that neither worker starts a long one
while the other is about to finish.
"""

from __future__ import annotations

import pytest

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
    return nodeid.split("::", 1)[0].split("@", 1)[0]


def first_units_first(items: list[pytest.Item]) -> None:
    """Sort ``items`` in place: the units of :data:`FIRST_UNITS` first, in that order; every
    other test keeps its place relative to the rest."""
    rank = {unit: index for index, unit in enumerate(FIRST_UNITS)}
    items.sort(key=lambda item: rank.get(unit_of(item), len(rank)))
