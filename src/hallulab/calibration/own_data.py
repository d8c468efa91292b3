"""Calibrate on one's own labelled data: ``hallulab calibrate`` and ``hallulab calibrations``.

``hallulab calibrate scores.csv --records labelled.jsonl -o mine.json`` joins a file
``hallulab score`` wrote with the labels of the records it scored (the canonical schema's:
sentence ``labels``, claim, response or prompt labels; hallucinated class positive, as the
benchmark's units: :func:`hallulab.benchmark.units.cell_units`) at one variant and level, and
fits and measures a calibration exactly as the committed ones are
(:func:`hallulab.calibration.fit.fit_calibration`), into a file ``--calibration`` takes.
``hallulab calibrations`` lists the committed ones.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from hallulab.benchmark.statistics import Estimate
from hallulab.benchmark.units import BINARY_LEVELS, cell_units
from hallulab.calibration.fit import Calibration, CalibrationError, CalibrationSettings, fit_calibration
from hallulab.calibration.stored import (
    CALIBRATIONS_DIR,
    HeldoutReliability,
    committed_files,
    committed_folder,
    read_heldout_reliability,
    write_calibration,
)
from hallulab.core.io import check_output_path
from hallulab.core.scored_file import read_scored
from hallulab.data.records import load_jsonl_records
from hallulab.data.schema import Record
from hallulab.evaluation.protocol import ProtocolKnobs
from hallulab.pipeline import registry

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

#: the suffix of the file ``hallulab calibrate`` writes (JSON, whatever the name)
OUTPUT_SUFFIX = ".json"


def check_inputs(scores_path: Path, records_path: Path, out: Path) -> None:
    """``hallulab calibrate``'s files, refused before any work: an input that is a folder or
    missing, an output ``-o`` (``out``) that is a folder, lies under a file, or does not end in
    ``.json`` (the file is JSON whatever its name; ``hallulab score --calibration`` takes a
    ``.json`` path as a file)."""
    for given, path in (("scores", scores_path), ("--records", records_path)):
        if path.is_dir():
            raise CalibrationError(f"{given} {path}: is a folder; name the file")
        if not path.is_file():
            raise CalibrationError(f"{given} {path}: no such file")
    if out.suffix != OUTPUT_SUFFIX:
        raise CalibrationError(
            f"-o {out}: a calibration is written as JSON; name a {OUTPUT_SUFFIX} file, not {out.suffix or 'no suffix'}"
        )
    check_output_path(out, "-o")


def settings_from_flags(rule: str, target_precision: float) -> CalibrationSettings:
    """The settings ``--rule`` and ``--target-precision`` give; a target outside (0, 1] (a
    precision is a share of the flagged units) is refused naming the flag."""
    if not 0.0 < target_precision <= 1.0:  # NaN fails too
        raise CalibrationError(f"--target-precision {target_precision}: a precision is a number in (0, 1]")
    return CalibrationSettings(rule=rule, target_precision=target_precision)


def read_records(path: Path) -> list[Record]:
    """The records in ``path`` read as ``hallulab score`` reads them (:mod:`hallulab.api`): a
    record with a response and no ``sentences`` is split into sentences by the spaCy pipeline
    of the default settings (``spacy`` in ``conf/config.yaml``), loaded only when such a record
    is there, so a record labelled at the response level needs no sentences of its own."""
    from hallulab.core.config import compose
    from hallulab.text.spacy_tokens import SpacyTokenizer

    tokenizer: SpacyTokenizer | None = None

    def configured() -> SpacyTokenizer:
        nonlocal tokenizer
        if tokenizer is None:
            spacy = compose()["spacy"]
            tokenizer = SpacyTokenizer(str(spacy["model"]), batch_size=int(spacy["batch_size"]))
        return tokenizer

    return load_jsonl_records(
        path,
        lambda texts: configured().sentences(texts),
        lambda items: configured().require_fits(items),
    )


#: the columns of a scored file that the calibration reads as numbers
NUMERIC_COLUMNS = ("unit_index", "score")


def _where(path: Path, row: int) -> str:
    """Row ``row`` (0-based) of the scored file ``path`` as its reader finds it: a CSV's line
    (after the header), a JSONL's line, a Parquet file's row."""
    if path.suffix == ".csv":
        return f"{path}:{row + 2}"
    if path.suffix == ".jsonl":
        return f"{path}:{row + 1}"
    return f"{path}, row {row + 1}"


def check_numbers(scores: pd.DataFrame, path: Path) -> None:
    """Refuse a scored file whose unit index or score is not a number (an empty score, NaN, is
    a unit the method did not score, and is left out): one line naming the file's line, the
    record and the field."""
    for column in NUMERIC_COLUMNS:
        values = scores[column]
        bad = values.notna() & pd.to_numeric(values, errors="coerce").isna()
        if bad.any():
            row = int(bad.to_numpy().nonzero()[0][0])
            record = scores["record_id"].iloc[row]
            raise CalibrationError(
                f"{_where(path, row)}: record {str(record)!r}, field {column!r}: {values.iloc[row]!r} is not a number"
            )


def calibrate_scored(
    scores_path: Path,
    records_path: Path,
    out: Path,
    settings: CalibrationSettings,
    variant: str | None = None,
    level: str | None = None,
) -> Calibration:
    """Fit ``settings``' calibration of one variant at one level of a scored file on its
    records' labels and write it to ``out``. The variant defaults to the method's headline
    benchmark variant, the level to the finest labelled level the variant scores."""
    scores = read_scored(scores_path)
    check_numbers(scores, scores_path)
    methods = sorted(set(scores["method"]))
    if len(methods) != 1:
        raise CalibrationError(f"{scores_path}: scores of {len(methods)} methods ({methods}); calibrate one at a time")
    method = methods[0]
    written = list(dict.fromkeys(scores["variant"]))
    if variant is None:
        headline = registry.method(method).benchmark_variants
        variant = next((v for v in headline if v in written), written[0])
    if variant not in written:
        raise CalibrationError(f"{scores_path}: no variant {variant!r}; it holds {', '.join(written)}")
    records = read_records(records_path)
    scored_levels = set(scores.loc[scores["variant"] == variant, "level"])
    levels = [level] if level is not None else [lv for lv in BINARY_LEVELS if lv in scored_levels]
    config = ProtocolKnobs()
    for candidate in levels:
        if candidate not in BINARY_LEVELS:
            raise CalibrationError(f"--level {candidate}: a calibrated level is one of {BINARY_LEVELS}")
        units = cell_units(records, scores, candidate, [variant], config)[variant]
        if len(units.scores):
            calibration = fit_calibration(records_path.stem, method, units, settings)
            write_calibration(out, calibration)
            return calibration
    raise CalibrationError(
        f"{records_path}: no labelled unit of {variant} at {' or '.join(levels) or 'a binary level'} "
        "(the records need labels at a level the variant scores)"
    )


def _figure(estimate: Estimate) -> str:
    """A held-out figure and its interval, ``0.0344 [0.0123, 0.0567]`` (``n/a``: undefined, e.g.
    nothing flagged; no interval: one held-out record)."""
    if estimate.point is None:
        return "n/a"
    if estimate.low is None or estimate.high is None:
        return f"{estimate.point}"
    return f"{estimate.point} [{estimate.low}, {estimate.high}]"


def summary_lines(calibration: Calibration, out: Path) -> list[str]:
    """What ``hallulab calibrate`` prints: where it went, and how it fits the held-out records,
    each figure with its bootstrap interval over the held-out records (the calibration file
    holds the same figures)."""
    settings = calibration.settings
    held = calibration.heldout
    lines = [
        f"calibration of {calibration.method} {calibration.variant} at the {calibration.level} level -> {out}",
        f"fitted on {calibration.development_units} units of {calibration.development_records} records, "
        f"checked on {calibration.heldout_units} units of {calibration.heldout_records} held-out records "
        f"(each figure with its {settings.ci_level:.0%} interval over {settings.bootstrap_samples} resamples of "
        "those records)",
        f"Brier {_figure(held['uncalibrated']['brier'])} uncalibrated, {_figure(held[settings.kind]['brier'])} "
        f"{settings.kind}",
    ]
    if calibration.threshold is None:
        lines.append(f"no threshold reaches precision {settings.target_precision}: no flag")
    else:
        flag = held["flag"]
        lines.append(
            f"flag at probability >= {calibration.threshold:.4f} ({settings.rule}): precision "
            f"{_figure(flag['precision'])}, recall {_figure(flag['recall'])}, F1 {_figure(flag['f1'])}"
        )
    return lines


@dataclass(frozen=True)
class CommittedListing:
    """The committed calibrations ``hallulab calibrations`` lists: each one that reads (where it
    lies, as shown, and its held-out figures), and one line per file it refused."""

    found: list[tuple[str, HeldoutReliability]]
    refused: list[str]


def committed(folder: Path | Traversable, prefix: str) -> CommittedListing:
    """Every calibration file of ``folder`` (:func:`~hallulab.calibration.stored.committed_folder`),
    each read and checked as ``--calibration`` reads it and shown as ``prefix`` and
    ``<data set>/<file>``; a damaged one (truncated, a field missing, not JSON at all) is a line
    naming it, and the others are still listed."""
    found, refused = [], []
    for shown, source in committed_files(folder):
        try:
            found.append((f"{prefix}{shown}", read_heldout_reliability(source)))
        except CalibrationError as error:
            refused.append(str(error))
    return CommittedListing(found, refused)


def listing_lines(listing: CommittedListing) -> list[str]:
    """The table ``hallulab calibrations`` prints (tab-separated, a header first)."""
    lines = ["data set\tmethod\tvariant\tlevel\theld-out units\tBrier uncalibrated -> isotonic\tfile"]
    for shown, held in listing.found:
        stored = held.calibration
        brier = f"{held.brier['uncalibrated'][0]} -> {held.brier['isotonic'][0]}"
        lines.append(
            f"{stored.dataset}\t{stored.method}\t{stored.variant}\t{stored.level}\t{held.heldout_units}\t{brier}\t{shown}"
        )
    return lines


def print_committed() -> int:
    """``hallulab calibrations``: the table on stdout (from a checkout its ``results/calibration``,
    from an installed package the copy it ships), then one line on stderr per file that does
    not read. The exit status is 0 when every file read, 2 when one did not (the others listed
    all the same), so that a script notices a damaged file."""
    from hallulab.core.config import package_checkout

    folder = committed_folder()
    shown = CALIBRATIONS_DIR.as_posix() if package_checkout() is not None else str(folder).rstrip("/")
    listing = committed(folder, f"{shown}/")
    if not listing.found and not listing.refused:
        print(f"no committed calibration in {folder}; hallulab calibrate makes one")
        return 0
    if listing.found:
        print("\n".join(listing_lines(listing)))
    for line in listing.refused:
        print(f"hallulab calibrations: error: {line}", file=sys.stderr)
    return 2 if listing.refused else 0
