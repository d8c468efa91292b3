"""Benchmark record: what one run of the test suite (``make test``, which ``.ci/run`` calls) took.

``make test`` keeps every test's time in a JUnit XML file (``build/pytest.xml``). This reads it
and records, in ``perf/results.json`` (section ``test_suite``), the session's wall time,
the time of every test added up (what the two workers spent together: setup, call and teardown,
module fixtures included in the first test that uses them), and the ten slowest tests; with
``--reference`` (the XML file of an earlier run on the same machine), each row also gets its
speed-up over that run. CI's time limit is a guard, not a target: no test asserts a duration,
and this figure lives here and on ``docs/performance.md`` only. Usage, after ``make test``:

    python perf/record_test_suite.py [--junit build/pytest.xml] [--reference OLD.xml]
"""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from hallulab.tooling.bench_record import BenchRow, print_rows, record

#: how many of the slowest tests the record keeps
SLOWEST = 10


@dataclass(frozen=True)
class SuiteTimes:
    """One run's times: its wall seconds and each test's seconds, by test id."""

    wall: float
    tests: dict[str, float]

    @property
    def summed(self) -> float:
        return sum(self.tests.values())


def read_junit(path: Path) -> SuiteTimes:
    """The wall time (the ``testsuite`` element's ``time``) and every ``testcase``'s time,
    keyed ``module::name`` (the ``@group`` suffix pytest-xdist adds dropped)."""
    root = ET.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    if suite is None:
        raise ValueError(f"{path}: no testsuite element (not a pytest JUnit XML file)")
    tests: dict[str, float] = {}
    for case in suite.iter("testcase"):
        module = str(case.get("classname", "")).replace(".", "/") + ".py"
        name = str(case.get("name", "")).split("@", 1)[0]
        tests[f"{module}::{name}"] = tests.get(f"{module}::{name}", 0.0) + float(case.get("time", 0.0))
    return SuiteTimes(float(suite.get("time", 0.0)), tests)


def rows(now: SuiteTimes, reference: SuiteTimes | None) -> list[BenchRow]:
    """Wall time, the summed test time and the :data:`SLOWEST` slowest tests of ``now``, each
    with its speed-up over ``reference`` (where it has the same test)."""

    def ratio(before: float | None, after: float) -> float | None:
        return round(before / after, 2) if before and after else None

    totals = (
        ("wall", "the suite's wall time", now.wall, reference.wall if reference else None),
        ("summed", "every test's time, added up over the workers", now.summed, reference.summed if reference else None),
    )
    out = [BenchRow(key, label, round(value, 1), "s", ratio(before, value)) for key, label, value, before in totals]
    slowest = sorted(now.tests.items(), key=lambda item: item[1], reverse=True)[:SLOWEST]
    for rank, (test, seconds) in enumerate(slowest, start=1):
        before = reference.tests.get(test) if reference else None
        out.append(BenchRow(f"slowest_{rank}", test, round(seconds, 1), "s", ratio(before, seconds)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--junit", type=Path, default=Path("build/pytest.xml"), help="the run's JUnit XML file")
    parser.add_argument("--reference", type=Path, help="an earlier run's JUnit XML file, for the ratios")
    args = parser.parse_args()
    now = read_junit(args.junit)
    reference = read_junit(args.reference) if args.reference else None
    measured = rows(now, reference)
    print_rows(measured)
    setup = {"tests": len(now.tests), "reference": str(args.reference) if args.reference else None}
    record("test_suite", measured, setup)


if __name__ == "__main__":
    main()
