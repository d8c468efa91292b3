"""What a report page is built from: a run's files, read once into typed values.

Everything here is an output the DAG already wrote; nothing is recomputed:

* the records (``data/generated/<dataset>/passages.jsonl``): prompt, response, sentences and
  their labels, samples, given claims, response and prompt labels;
* every method's unit-level scores (``data/aggregated/<dataset>/<method>.parquet``) and the
  details its aggregate step wrote beside each unit (``<method>.details.parquet``);
* the units the records do not spell out, read from the stored file of the artifact or method
  that declares them (:mod:`hallulab.report.declared`, :mod:`hallulab.pipeline.unit_texts`):
  each declaration's reader turns its file into the units' texts, sentences and details;
* the summary (``metrics/<dataset>/summary.csv`` and the notes of ``summary.md``), the curves
  (``metrics/<dataset>/{pr,n_curve,knob_curve}/*.csv``) and the correction table;
* the committed calibrations of the run's methods on its data set
  (``results/calibration/<dataset>/``, :mod:`hallulab.calibration`), whose held-out
  reliability the page draws.

A file a run did not write (a method not run, a data set without labels) is simply absent
from the page; nothing is filled in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from hallulab.calibration.stored import HeldoutReliability, committed_calibrations, read_heldout_reliability
from hallulab.core.io import read_json
from hallulab.data.records import load_jsonl_records
from hallulab.data.schema import Record
from hallulab.pipeline import paths
from hallulab.pipeline.unit_texts import DescribedUnit, StoredFiles
from hallulab.report.declared import DeclaredUnits, UnitFile


@dataclass(frozen=True)
class NamedUnits:
    """The units one declaration named in a run's files (its reader's output on them)."""

    declared: DeclaredUnits
    units: tuple[DescribedUnit, ...]


#: curve families: (folder under metrics/<dataset>, title)
CURVE_FAMILIES = (("pr", "precision-recall"), ("n_curve", "N (samples)"), ("knob_curve", "K (alternatives)"))


@dataclass(frozen=True)
class CurveFile:
    """One CSV of a curve family, as the curve stages wrote it."""

    family: str
    method: str
    frame: pd.DataFrame


@dataclass(frozen=True)
class ReportInputs:
    """A run's outputs for one data set (see the module docstring)."""

    dataset: str
    records: list[Record]
    scores: dict[str, pd.DataFrame]  # method -> unit-level scores
    #: the units the declarations name, those whose file the run wrote
    named_units: list[NamedUnits] = field(default_factory=list)
    #: method -> what its aggregate step wrote beside each unit (:data:`hallulab.core.units.DETAIL_COLUMNS`)
    details: dict[str, pd.DataFrame] = field(default_factory=dict)
    summary: pd.DataFrame | None = None
    notes: list[str] = field(default_factory=list)
    curves: list[CurveFile] = field(default_factory=list)
    correction: Mapping[str, Any] | None = None
    method_titles: dict[str, str] = field(default_factory=dict)
    #: method -> its headline variants (the detector table's, the paper's headline reading): the
    #: curves the page draws when a chart opens, the method's other variants a click away
    headline_variants: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: the committed calibrations of the run's methods on its data set, with their held-out checks
    calibrations: list[HeldoutReliability] = field(default_factory=list)
    #: method -> the ``undefined`` section of its ``.info.json`` (why each null is null)
    undefined: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    #: what the page says where a part is empty ("summary", "curves", "correction"), in place of
    #: :data:`ABSENT_IN_A_RUN` (a page of scored files is no pipeline run: no stage to name)
    absent: Mapping[str, str] = field(default_factory=dict)


#: what a run's page says where a part is empty: the stage that writes it has not run
ABSENT_IN_A_RUN = {
    "summary": "No summary: the summary stage has not run.",
    "curves": "No curves: the curve stages have not run on this data set.",
    "correction": "The correct stage has not run on this data set.",
}


class NothingToReportError(FileNotFoundError):
    """The data set has no generated records or no scores: the pipeline has not run on it."""


def summary_notes(markdown: str) -> list[str]:
    """The notes paragraph of ``summary.md`` (between the title and the first table), one
    note per line as the summary wrote them before wrapping."""
    notes: list[str] = []
    for line in markdown.splitlines()[1:]:
        if line.startswith("## "):
            break
        if not line.strip():
            continue
        if notes and not any(line.startswith(p) for p in NOTE_STARTS):
            notes[-1] += " " + line.strip()
        else:
            notes.append(line.strip())
    return notes


#: how each note of the summary starts (a wrapped line that starts otherwise continues one)
NOTE_STARTS = (
    "Profile:",
    "LLMs by role:",
    "NLI model:",
    "No published",
    "Paper columns:",
    "Scored,",
    "Plots:",
    "Partial:",
)


def _read_if(path: Path) -> Mapping[str, Any] | None:
    return read_json(path) if path.is_file() else None


def read_named_units(declared: DeclaredUnits, dataset: str, root: Path = Path()) -> NamedUnits | None:
    """The units ``declared`` names in the run's files for ``dataset`` under ``root``; None when
    the run wrote no file of its source (the artifact was not built, the method not run)."""
    where = declared.source.path(dataset)
    own = _read_if(root / where)
    if own is None:
        return None
    read = {name: _read_if(root / UnitFile("artifact", name).path(dataset)) for name in declared.texts.reads}
    artifacts = {name: found for name, found in read.items() if found is not None}
    return NamedUnits(declared, tuple(declared.texts.read(StoredFiles(own, where, artifacts))))


def load_inputs(
    dataset: str,
    root: Path = Path(),
    method_titles: Mapping[str, str] | None = None,
    units: Sequence[DeclaredUnits] = (),
    headline_variants: Mapping[str, Sequence[str]] | None = None,
) -> ReportInputs:
    """Read a run's outputs for ``dataset`` under ``root`` (the repository); the units the
    declarations ``units`` name, from their files; ``headline_variants``: each method's curves
    drawn first."""
    records_path = root / paths.records(dataset)
    if not records_path.is_file():
        raise NothingToReportError(f"{records_path} not found: run the pipeline on {dataset!r} first (make run)")
    records = load_jsonl_records(records_path)
    aggregated = sorted((root / paths.unit_scores("x", dataset)).parent.glob("*.parquet"))
    details_suffix = paths.unit_details("", dataset).rsplit("/", 1)[1]  # ".details.parquet"
    scores = {path.stem: pd.read_parquet(path) for path in aggregated if not path.name.endswith(details_suffix)}
    details = {
        path.name[: -len(details_suffix)]: pd.read_parquet(path)
        for path in aggregated
        if path.name.endswith(details_suffix)
    }
    if not scores:
        raise NothingToReportError(f"no unit scores under data/aggregated/{dataset}: run the pipeline first")
    named_units = [found for declared in units if (found := read_named_units(declared, dataset, root))]
    summary_csv = root / paths.summary(dataset, "csv")
    summary_md = root / paths.summary(dataset, "md")
    metrics_dir = root / paths.metrics_dir(dataset)
    curves = [
        CurveFile(family, csv.stem, pd.read_csv(csv))
        for family, _ in CURVE_FAMILIES
        for csv in sorted((metrics_dir / family).glob("*.csv"))
    ]
    undefined = {
        method: info.get("undefined", {})
        for method in scores
        if (info := _read_if(root / paths.metrics(method, "info", dataset))) is not None
    }
    return ReportInputs(
        dataset=dataset,
        undefined=undefined,
        records=records,
        details=details,
        scores=scores,
        named_units=named_units,
        summary=pd.read_csv(summary_csv) if summary_csv.is_file() else None,
        notes=summary_notes(summary_md.read_text(encoding="utf-8")) if summary_md.is_file() else [],
        curves=curves,
        correction=_read_if(root / paths.correction_metrics(dataset)),
        method_titles=dict(method_titles or {}),
        headline_variants={method: tuple(names) for method, names in (headline_variants or {}).items()},
        calibrations=[
            held
            for path in committed_calibrations(root, dataset)
            if (held := read_heldout_reliability(path)).calibration.method in scores
        ],
    )
