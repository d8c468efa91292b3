"""How ``make test`` shares the suite between its pytest-xdist workers (``--dist loadgroup``).

A *unit* is a test module: one worker takes all of its tests, so that its module-scoped
fixtures (the WikiBio reproduction, the real-data slices, a loaded model) are built once. Each
test carries its unit as pytest-xdist's ``xdist_group`` mark (added at collection,
:func:`unit_of`); a worker takes the next unit when it runs out of work.

The toy DAG (the ``toy_run`` session fixture) is run once per session by the first worker that
needs it, and every worker then works in a copy of its own (tests/conftest.py), so the modules
that use it are units like any other. The order the units are handed out in
(``--no-loadscope-reorder``) keeps both workers busy: the longest units first
(:data:`FIRST_UNITS`: the toy run on one worker, the WikiBio reproduction on the other, then
the real-data slices), then every module that does not use the toy run, and the modules that
use it last, so that the other worker rarely waits for the toy run to finish.
"""

from __future__ import annotations

import pytest

#: The longest units, in the order they start: the toy run's own checks (the first worker to
#: need the toy run runs it), the WikiBio reproduction, then the real-data slices.
FIRST_UNITS = ("tests/test_make_run.py", "tests/test_wikibio_reproduction.py", "tests/test_real_slices.py")


def uses_toy_dag(item: pytest.Item) -> bool:
    return "toy_run" in getattr(item, "fixturenames", ())


def unit_of(item: pytest.Item) -> str:
    """The test's module (its id up to the first ``::``)."""
    return module_of(item.nodeid)


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0].split("@", 1)[0]


def units_in_order(items: list[pytest.Item]) -> None:
    """Sort ``items`` in place: the units of :data:`FIRST_UNITS` first, in that order, then the
    modules with no test that uses the toy run, then those with one; within each part every
    test keeps its place (collection order)."""
    rank = {unit: index for index, unit in enumerate(FIRST_UNITS)}
    toy_units = {unit_of(item) for item in items if uses_toy_dag(item)}

    def key(item: pytest.Item) -> tuple[int, int]:
        unit = unit_of(item)
        if unit in rank:
            return (0, rank[unit])
        return (2 if unit in toy_units else 1, 0)

    items.sort(key=key)
