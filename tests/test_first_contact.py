"""What a stranger meets first (the small things of "What a score means"): the mode of the
files the stages write, scores written without a negative zero, help text without reST
roles, the scored-files page's wording, data set names and ``hallulab plan`` outside the
checkout."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hallulab.core.io import atomic_open, write_json


@contextmanager
def _umask(mask: int) -> Iterator[None]:
    before = os.umask(mask)
    try:
        yield
    finally:
        os.umask(before)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_atomic_write_gets_the_usual_mode(tmp_path: Path, mask: int, expected: int) -> None:
    """A file written through the atomic temporary file gets 0666 less the umask, as a plain
    ``open`` gives it, not mkstemp's 0600 (report.html was unreadable to others)."""
    with _umask(mask):
        with atomic_open(tmp_path / "page.html") as handle:
            handle.write("<html></html>")
        write_json(tmp_path / "a.json", {"a": 1})
        with atomic_open(tmp_path / "b.bin", "wb") as handle:
            handle.write(b"\0")
    for name in ("page.html", "a.json", "b.bin"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == expected, name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.bin", "page.html"]  # no temporary left
