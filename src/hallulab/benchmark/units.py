"""The labelled units behind one benchmark cell: what every cell statistic is computed from.

After a cell's run (``make result``, :mod:`hallulab.benchmark.runs`) the workspace holds the
prepared records of its data set and the method's unit scores; :func:`cell_units` joins them at
the cell's level into one row per labelled unit and benchmark variant,

    (variant, record, unit, positive, score)

with the hallucinated class positive at every level: a sentence labelled minor or major
inaccurate (SelfCheckGPT's NonFact, label > 0.499), an unsupported claim (label > 0.499, as the
CCP paper's claim-level protocol), a response labelled a hallucination, an unfamiliar prompt.
A unit the variant scored NaN is left out (as the evaluation leaves it out). The rows are kept
beside the cell's cost, ``results/benchmark/<data set>/<method>.units.csv``, so the
table's statistics and its paired comparisons (:mod:`hallulab.benchmark.statistics`) are
recomputed from committed files alone, with no data root and no run.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from hallulab.core.config import ConfigError
from hallulab.core.io import atomic_open
from hallulab.core.units import level_rows
from hallulab.data.records import load_jsonl_records
from hallulab.data.schema import Record
from hallulab.evaluation.levels import unit_labels
from hallulab.evaluation.protocol import ProtocolKnobs, finite_for_ranking
from hallulab.pipeline import paths
from hallulab.pipeline.params import ParamsView

#: the levels whose units carry a binary label (the passage level is a mean label: a correlation)
BINARY_LEVELS = ("sentence", "claim", "response", "prompt")
COLUMNS = ("variant", "record", "unit", "positive", "score")


@dataclass(frozen=True)
class CellUnits:
    """One variant's scored, labelled units at one level, in the data set's unit order."""

    level: str
    variant: str
    records: tuple[str, ...]
    units: tuple[int, ...]
    positive: np.ndarray  # bool
    scores: np.ndarray  # float64, finite (infinities moved just past the finite range)

    @property
    def keys(self) -> tuple[tuple[str, int], ...]:
        return tuple(zip(self.records, self.units, strict=True))

    def restricted_to(self, keys: Sequence[tuple[str, int]]) -> CellUnits:
        """The units among ``keys``, in ``keys``' order (two variants restricted alike line up)."""
        index = {key: i for i, key in enumerate(self.keys)}
        rows = np.asarray([index[key] for key in keys], dtype=np.int64)
        return CellUnits(
            self.level,
            self.variant,
            tuple(key[0] for key in keys),
            tuple(key[1] for key in keys),
            self.positive[rows] if rows.size else np.zeros(0, dtype=bool),
            self.scores[rows] if rows.size else np.zeros(0),
        )


def binary_level(levels: Sequence[str]) -> str | None:
    """The level a cell's statistics are at: the finest binary one of its evaluated levels."""
    return next((level for level in levels if level in BINARY_LEVELS), None)


def _truth(records: Sequence[Record], level: str, cfg: ProtocolKnobs) -> dict[tuple[str, int], bool]:
    """(record, unit) -> positive, for every labelled unit of ``level``."""
    if level == "sentence":
        return {
            (p.id, index): label > cfg.nonfact_threshold
            for p in records
            if p.labels is not None
            for index, label in enumerate(p.labels)
        }
    labels = unit_labels(records, level)
    return dict(zip(labels.keys, (bool(v) for v in labels.positive), strict=True))


def cell_units(
    records: Sequence[Record], frame: pd.DataFrame, level: str, variants: Sequence[str], cfg: ProtocolKnobs
) -> dict[str, CellUnits]:
    """Every benchmark variant's labelled units at ``level``; a variant the frame does not have
    is an error naming it (a benchmark variant is one the method writes)."""
    if level not in BINARY_LEVELS:
        raise ValueError(f"level {level!r}: the benchmark's statistics need a binary level {BINARY_LEVELS}")
    truth = _truth(records, level, cfg)
    order = {key: i for i, key in enumerate(truth)}
    found = {}
    written = set(frame["variant"])
    for variant in variants:
        if variant not in written:
            raise ConfigError(f"benchmark variant {variant!r}: the method's scores have no such variant")
        rows = level_rows(frame, variant, level)
        scored = [
            ((str(rid), int(unit)), float(score))
            for rid, unit, score in zip(rows["record_id"], rows["unit_index"], rows["score"], strict=True)
            if (str(rid), int(unit)) in truth and not math.isnan(float(score))
        ]
        scored.sort(key=lambda item: order[item[0]])
        keys = [key for key, _ in scored]
        found[variant] = CellUnits(
            level,
            variant,
            tuple(key[0] for key in keys),
            tuple(key[1] for key in keys),
            np.asarray([truth[key] for key in keys], dtype=bool),
            finite_for_ranking(np.asarray([score for _, score in scored], dtype=np.float64)),
        )
    return found


def write_units(path: Path, level: str, units: Mapping[str, CellUnits]) -> None:
    """The rows of every variant, one CSV with the level in its first line's comment."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path) as handle:
        handle.write(f"# level: {level}\n")
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(COLUMNS)
        for variant, found in units.items():
            for record, unit, positive, score in zip(
                found.records, found.units, found.positive, found.scores, strict=True
            ):
                writer.writerow((variant, record, unit, int(positive), repr(float(score))))


def read_units(path: Path) -> dict[str, CellUnits]:
    """What :func:`write_units` wrote; a damaged file is a one-line error naming it (and the
    line): bytes that are not UTF-8, no unit at all (an emptied file), a unit listed twice for
    a variant (it would count twice: a cell's units are its cost's denominator), a score that
    is not a finite number (the writer keeps every score finite; a NaN would move a ROC-AUC),
    a label other than 0 or 1."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"{path}: byte {error.start} ({error.object[error.start : error.start + 1]!r}) is not UTF-8 text:"
            " run the cell again"
        ) from None
    lines = text.splitlines()
    if not text.strip():
        raise ConfigError(f"{path}: empty: run the cell again")
    if not lines[0].startswith("# level: "):
        raise ConfigError(f"{path}: line 1: expected '# level: <level>'")
    level = lines[0].removeprefix("# level: ").strip()
    reader = csv.reader(lines[1:])
    header = next(reader, None)
    if header is None or tuple(header) != COLUMNS:
        raise ConfigError(f"{path}: line 2: expected the columns {','.join(COLUMNS)}")
    rows: dict[str, list[tuple[str, int, bool, float]]] = {}
    seen: dict[tuple[str, str, int], int] = {}
    for number, row in enumerate(reader, start=3):
        if len(row) != len(COLUMNS):
            raise ConfigError(
                f"{path}: line {number}: {len(row)} fields, not the {len(COLUMNS)} of {','.join(COLUMNS)}:"
                " run the cell again"
            )
        variant, record, unit, positive, score = row
        try:
            key = (variant, record, int(unit))
        except ValueError:
            problem = f"unit {unit!r} is not a whole number"
            raise ConfigError(f"{path}: line {number}: {problem}: run the cell again") from None
        try:
            value = float(score)
        except ValueError:
            raise ConfigError(f"{path}: line {number}: score {score!r} is not a number: run the cell again") from None
        if key in seen:
            raise ConfigError(
                f"{path}: line {number}: variant {variant!r}, record {record!r}, unit {unit} is listed twice"
                f" (line {seen[key]} too): run the cell again"
            )
        if not math.isfinite(value):
            raise ConfigError(f"{path}: line {number}: score {score!r} is not a finite number: run the cell again")
        if positive not in ("0", "1"):
            raise ConfigError(f"{path}: line {number}: positive {positive!r} is neither 0 nor 1: run the cell again")
        seen[key] = number
        rows.setdefault(variant, []).append((record, key[2], positive == "1", value))
    if not rows:
        raise ConfigError(f"{path}: no units (only its header): run the cell again")
    return {
        variant: CellUnits(
            level,
            variant,
            tuple(r[0] for r in found),
            tuple(r[1] for r in found),
            np.asarray([r[2] for r in found], dtype=bool),
            np.asarray([r[3] for r in found], dtype=np.float64),
        )
        for variant, found in rows.items()
    }


def export_cell_units(
    dataset: str, method: str, levels: Sequence[str], variants: Sequence[str], destination: Path, root: Path
) -> int:
    """After a cell's run in the checkout ``root``: its variants' labelled units at the finest
    binary level of ``levels`` (every variant the method wrote when ``variants`` is empty),
    written to ``destination``; returns the number of rows (0: no binary level, nothing written).
    A sentence's NonFact threshold is the run's own ``evaluate`` setting (``params.yaml``); the
    other levels' labels are read as the evaluation reads them
    (:func:`hallulab.evaluation.levels.unit_labels`)."""
    level = binary_level(levels)
    if level is None:
        return 0
    cfg = ParamsView.load(str(root / "params.yaml"), ("evaluate",), "evaluate").typed(ProtocolKnobs, "evaluate")
    records = load_jsonl_records(str(root / paths.records(dataset)))
    frame = pd.read_parquet(root / paths.unit_scores(method, dataset))
    chosen = tuple(variants) or tuple(dict.fromkeys(frame["variant"]))
    found = cell_units(records, frame, level, chosen, cfg)
    write_units(destination, level, found)
    return sum(len(units.scores) for units in found.values())
