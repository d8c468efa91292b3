"""The test suite's time record (perf/record_test_suite.py) reads pytest's JUnit XML as
``make test`` writes it under pytest-xdist, and ranks the slowest tests with their speed-ups."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.modules import load_module
from tests.workspace import REPO

XML = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3" time="{wall}">
<testcase classname="tests.test_a" name="test_slow@tests/test_a.py" time="{slow}"/>
<testcase classname="tests.test_a" name="test_fast@tests/test_a.py" time="1.5"/>
<testcase classname="tests.test_b" name="test_toy[x]@toy" time="2.5"/>
</testsuite></testsuites>
"""


def test_the_record_reads_wall_time_test_times_and_the_speed_up_over_a_reference(tmp_path: Path) -> None:
    module = load_module("record_test_suite", REPO / "perf" / "record_test_suite.py")
    (tmp_path / "before.xml").write_text(XML.format(wall=100.0, slow=80.0))
    (tmp_path / "after.xml").write_text(XML.format(wall=50.0, slow=20.0))
    now, before = module.read_junit(tmp_path / "after.xml"), module.read_junit(tmp_path / "before.xml")
    assert now.wall == 50.0 and now.summed == pytest.approx(24.0)
    expected = {"tests/test_a.py::test_slow", "tests/test_a.py::test_fast", "tests/test_b.py::test_toy[x]"}
    assert set(now.tests) == expected
    rows = {row.key: row for row in module.rows(now, before)}
    assert rows["wall"].ratio == 2.0 and rows["summed"].ratio == pytest.approx(round(84.0 / 24.0, 2))
    assert rows["slowest_1"].label == "tests/test_a.py::test_slow" and rows["slowest_1"].ratio == 4.0
    assert [rows[f"slowest_{i}"].value for i in (1, 2, 3)] == [20.0, 2.5, 1.5]
    assert module.rows(now, None)[0].ratio is None
