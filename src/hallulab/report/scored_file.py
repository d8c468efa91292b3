"""A report page for a user's own scored file (``hallulab score``'s output), without a DAG run.

    hallulab report scores.parquet [more.csv ...] --records my_records.jsonl -o report.html

The page is the DAG's page (:mod:`hallulab.report.page`) built from what a scored file holds:
one row per unit with its method, variant, level, position, score and text. The records give
the prompt, the response, the samples and any labels; a record that gave no ``sentences``
takes the ones its scores name (the split ``hallulab score`` made), so the page shows the
units that were scored. A run's extras (summary, curves, knowledge graphs, HalluCheck's
decision paths) are absent: a scored file does not hold them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from hallulab.core.errors import UserFacingError
from hallulab.core.io import atomic_open, read_jsonl
from hallulab.core.units import COLUMNS
from hallulab.data.records import numbered_passages
from hallulab.data.schema import Passage
from hallulab.report.inputs import ReportInputs
from hallulab.report.page import render
from hallulab.report.payload import build_payload
from hallulab.report.units import UnitCatalogue


class ScoredFileError(ValueError, UserFacingError):
    """A scored file the report cannot read: its path and what is missing."""


def read_scored(path: Path) -> pd.DataFrame:
    """A file ``hallulab score`` wrote (.parquet, .csv or .jsonl), with its unit columns."""
    if not path.is_file():
        raise ScoredFileError(f"{path}: no such file")
    if path.suffix == ".csv":
        frame = pd.read_csv(path)
    elif path.suffix == ".jsonl":
        frame = pd.read_json(path, lines=True)
    else:
        frame = pd.read_parquet(path)
    missing = [column for column in ("method", *COLUMNS) if column not in frame.columns]
    if missing:
        raise ScoredFileError(f"{path}: not a scored file of `hallulab score` (no column {missing[0]!r})")
    return frame


def scored_sentences(frame: pd.DataFrame) -> dict[str, list[str]]:
    """Each record's sentences as its sentence rows name them (the split made when scoring)."""
    rows = frame[(frame["level"] == "sentence") & frame["text"].notna()] if "text" in frame else frame.iloc[:0]
    found: dict[str, dict[int, str]] = {}
    for row in rows.itertuples(index=False):
        found.setdefault(str(row.record_id), {})[int(row.sentence_index)] = str(row.text)
    return {rid: [by_index[i] for i in sorted(by_index)] for rid, by_index in found.items()}


def records_for(path: Path, frame: pd.DataFrame) -> list[Passage]:
    """The records file's records; one without ``sentences`` takes those its scores name."""
    sentences = scored_sentences(frame)

    def with_scored_sentences(raw: Any) -> Any:
        if isinstance(raw, dict) and "sentences" not in raw and raw.get("response") and raw.get("id") in sentences:
            return {**raw, "sentences": sentences[raw["id"]]}
        return raw

    return numbered_passages(((line, with_scored_sentences(raw)) for line, raw in read_jsonl(path)), path)


def write_scored_report(scored: Sequence[Path], records: Path, out: Path, titles: dict[str, str]) -> Path:
    """The page of ``scored`` files over ``records``, written to ``out``; returns ``out``."""
    frame = pd.concat([read_scored(path) for path in scored], ignore_index=True)
    passages = records_for(records, frame)
    scores = {str(method): rows[list(COLUMNS)].reset_index(drop=True) for method, rows in frame.groupby("method")}
    note = f"A page of scored files ({', '.join(p.name for p in scored)}): no summary, curves or correction table."
    inputs = ReportInputs(records.stem, passages, scores, notes=[note], method_titles=titles)
    page = render(build_payload(inputs, UnitCatalogue.build(passages, {}, {})))
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(out) as handle:
        handle.write(page)
    return out
