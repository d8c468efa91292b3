"""A report page for a user's own scored file (``hallulab score``'s output), without a DAG run.

    hallulab report scores.parquet [more.csv ...] --records my_records.jsonl -o report.html

The page is the DAG's page (:mod:`hallulab.report.page`) built from what a scored file holds:
one row per unit with its method, variant, level, position, score and text. The records give
the prompt, the response, the samples and any labels; a record that gave no ``sentences``
takes the ones its scores name (the split ``hallulab score`` made), so the page shows the
units that were scored. A run's extras (summary, curves, the units an artifact or a method's
raw scores define, the details an aggregate step wrote) are absent: a scored file does not hold
them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from hallulab.core.io import atomic_open, read_jsonl
from hallulab.core.scored_file import ScoredFileError, read_scored
from hallulab.core.units import COLUMNS
from hallulab.data.records import numbered_records
from hallulab.data.schema import Record
from hallulab.report.inputs import ReportInputs
from hallulab.report.page import render
from hallulab.report.payload import build_payload
from hallulab.report.units import UnitCatalogue


def scored_sentences(frame: pd.DataFrame) -> dict[str, list[str]]:
    """Each record's sentences as its sentence rows name them (the split made when scoring)."""
    rows = frame[(frame["level"] == "sentence") & frame["text"].notna()] if "text" in frame else frame.iloc[:0]
    found: dict[str, dict[int, str]] = {}
    for row in rows.itertuples(index=False):
        found.setdefault(str(row.record_id), {})[int(row.sentence_index)] = str(row.text)
    return {rid: [by_index[i] for i in sorted(by_index)] for rid, by_index in found.items()}


def records_for(path: Path, frame: pd.DataFrame) -> list[Record]:
    """The records file's records; one without ``sentences`` takes those its scores name.
    Every scored record must be among them (checked first: records that are not the scored
    ones are named as such, not by a field they lack)."""
    sentences = scored_sentences(frame)
    read = list(read_jsonl(path))
    require_scored_records(path, [raw.get("id") if isinstance(raw, dict) else None for _, raw in read], frame)

    def with_scored_sentences(raw: Any) -> Any:
        if isinstance(raw, dict) and "sentences" not in raw and raw.get("response") and raw.get("id") in sentences:
            return {**raw, "sentences": sentences[raw["id"]]}
        return raw

    return numbered_records(((line, with_scored_sentences(raw)) for line, raw in read), path)


def require_scored_records(path: Path, record_ids: Sequence[object], frame: pd.DataFrame) -> None:
    """Raise :class:`ScoredFileError` when the records file (``record_ids``, in file order)
    lacks a record the scores name: none of them (another file), or some (another version)."""
    given = {str(rid) for rid in record_ids if rid is not None}
    scored = list(dict.fromkeys(str(rid) for rid in frame["record_id"]))
    absent = [rid for rid in scored if rid not in given]
    if not absent:
        return
    if len(absent) == len(scored):
        raise ScoredFileError(
            f"--records {path}: no record matches the scores ({len(scored)} scored record(s), e.g. {scored[0]!r}; "
            f"{len(given)} record(s) in the file); pass the records that were scored"
        )
    raise ScoredFileError(
        f"--records {path}: {len(absent)} of the {len(scored)} scored record(s) are not in it "
        f"(e.g. {absent[0]!r}); pass the records that were scored"
    )


#: what a page of scored files says where a part is empty: ``hallulab score`` writes unit scores
#: only; the summary, curves and correction table come from a pipeline run (``make run``)
SCORED_FILES_ABSENT = {
    "summary": "No summary: this page shows scored files, not a pipeline run.",
    "curves": "No curves: this page shows scored files, not a pipeline run.",
    "correction": "No correction table: this page shows scored files, not a pipeline run.",
}


def write_scored_report(scored: Sequence[Path], records_path: Path, out: Path, titles: dict[str, str]) -> Path:
    """The page of ``scored`` files over the records file ``records_path``, written to ``out``; returns ``out``."""
    frame = pd.concat([read_scored(path) for path in scored], ignore_index=True)
    records = records_for(records_path, frame)
    scores = {str(method): rows[list(COLUMNS)].reset_index(drop=True) for method, rows in frame.groupby("method")}
    note = f"A page of scored files ({', '.join(p.name for p in scored)}): no summary, curves or correction table."
    inputs = ReportInputs(
        records_path.stem, records, scores, notes=[note], method_titles=titles, absent=SCORED_FILES_ABSENT
    )
    page = render(build_payload(inputs, UnitCatalogue.build(records)))
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(out) as handle:
        handle.write(page)
    return out
