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
added or removed, a number that became text) is reported as such.

What the changes mean is read from ``dvc.lock``'s inputs: every stage's command and params,
the files it depends on that no stage makes, and the fingerprints the dependency-free stages
write (the code manifests, the data set's and the data root's files). When those are the
commit's, the run computed the same thing from the same code, settings and data, and every
difference (a number in its last digits, a trained model's bits and the hashes or ids taken
from them) is this CPU rounding differently: the report says so, gives the largest change and
whether it is within the CI gate's tolerance (percentage points), and that nothing needs
committing. Only when an input differs (or the committed lock cannot be read, and a change is
past the tolerance or not a number) does it say that the run computed something else.
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
    #: whether ``dvc.lock``'s inputs were compared with the commit's (both locks readable)
    inputs_compared: bool = False
    #: the first of ``dvc.lock``'s inputs that differs from the commit's; None: all the same
    changed_input: str | None = None

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


def lock_inputs(text: str) -> dict[str, Any] | None:
    """What a ``dvc.lock`` says its stages were computed from, by a name for people: each
    stage's command and params, each dependency no stage of the lock makes (its hash), and the
    outputs of the stages without dependencies (the code manifests, the data fingerprints).
    The outputs computed from those (numbers, models, their hashes) are not inputs. None: not
    a lock."""
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    stages = loaded.get("stages") if isinstance(loaded, dict) else None
    if not isinstance(stages, dict):
        return None
    outs = {out["path"] for stage in stages.values() for out in stage.get("outs") or []}
    # a folder whose files stages make (a foreach stage's outputs, read whole downstream) is made
    # too: its hash follows from theirs
    made = outs | {str(parent) for path in outs for parent in Path(path).parents if str(parent) != "."}

    def _hash(entry: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in entry.items() if key not in ("path", "size", "nfiles")}

    inputs: dict[str, Any] = {}
    for name, stage in stages.items():
        inputs[f"{name}: command"] = stage.get("cmd")
        inputs[f"{name}: params"] = stage.get("params")
        deps = stage.get("deps") or []
        for dep in deps:
            if dep["path"] not in made:
                inputs[f"{name}: {dep['path']}"] = _hash(dep)
        if not deps:
            for out in stage.get("outs") or []:
                inputs[f"{name}: {out['path']}"] = _hash(out)
    return inputs


def changed_input(before: str, after: str) -> tuple[bool, str | None]:
    """Whether two ``dvc.lock`` texts could be compared, and the first input (``lock_inputs``)
    that differs between them, or None when the run's inputs are the commit's."""
    old, new = lock_inputs(before), lock_inputs(after)
    if old is None or new is None:
        return False, None
    for key in sorted(old.keys() | new.keys()):
        if key not in old:
            return True, f"{key.split(':')[0]} (a stage the commit has not run)"
        if key not in new:
            return True, f"{key.split(':')[0]} (a stage of the commit this run has not)"
        if old[key] != new[key]:
            return True, key
    return True, None


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
    lock = root / LOCK
    compared, differs = changed_input(_git(root, "show", f"HEAD:{LOCK}"), lock.read_text(encoding="utf-8"))
    return Drift(len(outputs), tuple(changes), compared, differs)


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
    past = largest is not None and (largest.largest or 0.0) > tolerance
    if found.changed_input is not None:
        lines.append(
            f"An input of the run differs from the commit's ({found.changed_input} in {LOCK}): the run"
            " computed something else than the commit (code, settings or data); commit the outputs"
            " with that change."
        )
    elif found.inputs_compared:
        if largest is None:
            size_said = " No number changed."
        elif past:
            size_said = (
                f" The largest change of a number ({largest.largest:.6g}) is past the CI gate's tolerance"
                f" of {tolerance}: the gate would fail on this CPU's numbers."
            )
        else:
            size_said = (
                f" The largest change of a number ({largest.largest:.6g}) is within the CI gate's"
                f" tolerance of {tolerance}."
            )
        lines.append(
            f"The run's inputs in {LOCK} (code manifests, params, data fingerprints) are the commit's:"
            " this CPU's float kernels round differently from those of the machine that committed the"
            " outputs, so numbers move a little, and a trained model's bits and the hashes"
            " or ids taken from them differ (docs/explanation/reproducibility.md)."
            + size_said
            + (" Nothing needs committing." if past else " Nothing failed, and nothing needs committing.")
        )
    elif found.reshaped or past:
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
