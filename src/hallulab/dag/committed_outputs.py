"""What a run changed among the committed outputs, said at the end of ``make run``.

The toy set's outputs (metrics, plots, ``dvc.lock``) are committed so that a clone can gate
and compare against them. They are bit-exact only on a CPU that computes the same float bits
as the machine that committed them (docs/explanation/reproducibility.md): on another CPU
the first run rewrites some of them in their last digits. Rather than leave a stranger to
read a dirty tree as a failure, ``make run`` ends with this report: which committed outputs
changed, by how much at most (numbers compared with the committed ones), what that means,
and the command that restores them.

    python -m hallulab.dag.committed_outputs [--root .] [--tolerance 0.01]

A committed output is ``dvc.lock`` or a file ``dvc.lock`` lists as a stage output. JSON files
are compared leaf by leaf, CSV files cell by cell; a change of shape (a key, row or column
added or removed, a number that became text) is reported as such. The tolerance is the CI
gate's (percentage points): a change within it is float-kernel noise; past it, the run
computed something else (another code, setting or data), which the report says.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

LOCK = "dvc.lock"
#: the CI gate's tolerance (tests/baselines, hallulab.evaluation.gate), in the metrics' unit
DEFAULT_TOLERANCE = 0.01
#: files whose shape or text changed that the report names one by one (the rest are counted)
LISTED = 6


@dataclass(frozen=True)
class FileChange:
    """One committed output that differs from the last commit."""

    path: str
    largest: float | None  #: the largest absolute change of a number; None: nothing numeric compared
    where: str  #: the key path or cell of the largest change, or what changed in shape
    before: str
    after: str


@dataclass(frozen=True)
class Drift:
    """Every committed output a run changed, against ``HEAD``."""

    checked: int  #: committed outputs looked at
    changes: tuple[FileChange, ...]

    @property
    def largest(self) -> FileChange | None:
        numeric = [c for c in self.changes if c.largest is not None]
        return max(numeric, key=lambda c: c.largest or 0.0) if numeric else None

    @property
    def reshaped(self) -> tuple[FileChange, ...]:
        """Changes that are not numbers moving: a file's shape or text changed."""
        return tuple(c for c in self.changes if c.largest is None and c.path != LOCK)


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    return done.stdout if done.returncode == 0 else ""


def committed_outputs(root: Path) -> list[str]:
    """``dvc.lock`` and every output it lists that git tracks, relative to ``root``."""
    lock = root / LOCK
    if not lock.is_file():
        return []
    stages = (yaml.safe_load(lock.read_text(encoding="utf-8")) or {}).get("stages", {})
    listed = {LOCK} | {out["path"] for stage in stages.values() for out in stage.get("outs", [])}
    tracked = set(_git(root, "ls-files", "-z", "--", *sorted(listed)).split("\0"))
    return sorted(listed & tracked)


def _leaves(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, f"{prefix}[{index}]")
    else:
        yield prefix, value


def _csv_cells(text: str) -> Iterator[tuple[str, Any]]:
    for row_index, row in enumerate(csv.reader(io.StringIO(text))):
        for column, cell in enumerate(row):
            try:
                value: Any = float(cell)
            except ValueError:
                value = cell
            yield f"row {row_index + 1}, column {column + 1}", value


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _short(value: Any, width: int = 16) -> str:
    """A value for one line of the report: its repr, a long one cut (a hash, a sentence)."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def compare(path: str, before: str, after: str) -> FileChange:
    """How ``path``'s text moved from ``before`` (committed) to ``after`` (the run's)."""
    try:
        if path.endswith(".json"):
            old, new = dict(_leaves(json.loads(before))), dict(_leaves(json.loads(after)))
        elif path.endswith(".csv"):
            old, new = dict(_csv_cells(before)), dict(_csv_cells(after))
        else:
            return FileChange(path, None, "text", "", "")
    except ValueError:
        return FileChange(path, None, "not readable as before", "", "")
    if old.keys() != new.keys():
        added, removed = sorted(new.keys() - old.keys()), sorted(old.keys() - new.keys())
        parts = (f"added {added[:3]}" if added else "", f"removed {removed[:3]}" if removed else "")
        what = ", ".join(part for part in parts if part)
        return FileChange(path, None, f"shape: {what}", "", "")
    largest, where, was, now = 0.0, "", "", ""
    for key, value in old.items():
        a, b = _number(value), _number(new[key])
        if a is None or b is None:
            if value != new[key]:
                return FileChange(
                    path, None, f"{key}: {_short(value)} -> {_short(new[key])}", str(value), str(new[key])
                )
            continue
        if math.isnan(a) or math.isnan(b):
            if math.isnan(a) != math.isnan(b):
                return FileChange(path, None, f"{key}: {value!r} -> {new[key]!r}", str(value), str(new[key]))
            continue
        if abs(a - b) > largest:
            largest, where, was, now = abs(a - b), key, str(value), str(new[key])
    return FileChange(path, largest, where, was, now)


def drift(root: Path) -> Drift:
    """The committed outputs under ``root`` that differ from ``HEAD``, each compared."""
    outputs = committed_outputs(root)
    if not outputs:
        return Drift(0, ())
    dirty = {line[3:] for line in _git(root, "status", "--porcelain", "--", *outputs).splitlines()}
    changes = []
    for path in sorted(dirty & set(outputs)):
        before = _git(root, "show", f"HEAD:{path}")
        target = root / path
        after = target.read_text(encoding="utf-8") if target.is_file() else ""
        changes.append(compare(path, before, after))
    return Drift(len(outputs), tuple(changes))


def report(found: Drift, tolerance: float = DEFAULT_TOLERANCE, width: int = 100) -> str:
    """The lines ``make run`` ends with (at most ``width`` columns)."""
    if not found.checked:
        return "committed outputs: none to compare (no dvc.lock in git)"
    if not found.changes:
        return f"committed outputs: all {found.checked} came out as committed"
    lines = [f"committed outputs: {len(found.changes)} of {found.checked} differ from the last commit."]
    largest = found.largest
    if largest is not None:
        lines.append(f"largest change of a number: {largest.largest:.6g} in {largest.path}")
        lines.append(f"({largest.where}: {largest.before} -> {largest.after})")
    lines.extend(f"{change.path}: {change.where}" for change in found.reshaped[:LISTED])
    if len(found.reshaped) > LISTED:
        lines.append(f"... and {len(found.reshaped) - LISTED} more files whose shape or text changed")
    if found.reshaped or (largest is not None and (largest.largest or 0.0) > tolerance):
        lines.append(
            f"That is more than float rounding (the CI gate's tolerance is {tolerance}): the run computed"
            " something else than the commit (code, settings or data); commit the outputs with that change."
        )
    else:
        lines.append(
            f"Every change is within {tolerance}, the CI gate's tolerance: this CPU's float kernels round"
            " differently from those of the machine that committed the outputs"
            " (docs/explanation/reproducibility.md). Nothing failed."
        )
    lines.append("To restore the committed files:")
    head, *rest = lines
    wrapped = [textwrap.fill(line, width, initial_indent="  ", subsequent_indent="    ") for line in rest]
    return "\n".join([head, *wrapped, "    " + restore_command([c.path for c in found.changes], width - 4)])


def restore_command(paths: list[str], width: int = 96) -> str:
    """``git checkout -- <paths>`` on one line: the files themselves, or their folders (which
    hold only outputs) when the list would not fit."""
    command = "git checkout -- " + " ".join(paths)
    if len(command) <= width:
        return command
    folders = sorted({str(Path(p).parent) if "/" in p else p for p in paths})
    return "git checkout -- " + " ".join(folders)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the workspace (default: the current folder)")
    parser.add_argument(
        "--tolerance",
        type=float,
        default=DEFAULT_TOLERANCE,
        help=f"largest change still called float rounding (default: {DEFAULT_TOLERANCE})",
    )
    args = parser.parse_args(argv)
    print(report(drift(args.root), args.tolerance))
    return 0


if __name__ == "__main__":
    sys.exit(main())
