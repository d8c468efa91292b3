"""A column's folder: everything ``hallulab benchmark FILE -o DIR`` writes.

* ``column.json``: the cells (:func:`hallulab.column.page.column_dict`);
* ``column.md``: the page (:func:`hallulab.column.page.markdown_page`);
* ``units/<method>.units.csv``: each method's labelled units, in the table's units-file format
  (:func:`hallulab.benchmark.units.write_units`), so every number of the page re-derives from
  the folder alone;
* ``calibrations/<method>.<variant>.json``: a calibration of each row that is not model-limited
  and not the baseline, fitted as the committed ones are
  (:func:`hallulab.calibration.fit.fit_calibration`: isotonic and Platt maps on a development
  half of the records, the flag's threshold by the best-F1 rule, both evaluated on the held-out
  half), which ``hallulab score --calibration`` takes. A row that cannot be calibrated (one
  class in a half) has none, and the reason is printed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from hallulab.benchmark.units import CellUnits, write_units
from hallulab.calibration.fit import CalibrationError, CalibrationSettings, fit_calibration
from hallulab.calibration.stored import write_calibration
from hallulab.column.page import column_dict, markdown_page
from hallulab.column.run import Column
from hallulab.core.io import atomic_open

COLUMN_JSON = "column.json"
COLUMN_PAGE = "column.md"
UNITS_DIR = "units"
CALIBRATIONS_DIR = "calibrations"


def write_units_files(column: Column, out: Path) -> list[Path]:
    """Each method's rows' units in one file."""
    by_method: dict[str, dict[str, CellUnits]] = {}
    for cell in column.cells:
        by_method.setdefault(cell.method, {})[cell.variant] = cell.units
    written = []
    for method, units in by_method.items():
        path = out / UNITS_DIR / f"{method}.units.csv"
        write_units(path, next(iter(units.values())).level, units)
        written.append(path)
    return written


def write_calibrations(column: Column, out: Path, say: Callable[[str], None]) -> dict[str, str]:
    """Row name -> its calibration file (relative to ``out``), for the rows that have one."""
    written = {}
    settings = CalibrationSettings()
    for cell in column.cells:
        if cell.verdict.limited or cell.trivial_baseline:
            continue
        relative = f"{CALIBRATIONS_DIR}/{cell.method}.{cell.variant}.json"
        try:
            write_calibration(out / relative, fit_calibration(column.name, cell.method, cell.units, settings))
        except CalibrationError as error:
            say(f"{cell.name}: no calibration: {error}")
            continue
        written[cell.name] = relative
    return written


def write_column(column: Column, out: Path, say: Callable[[str], None] = lambda line: None) -> Path:
    """The folder's files (the module docstring); returns the page's path."""
    out.mkdir(parents=True, exist_ok=True)
    write_units_files(column, out)
    calibrations = write_calibrations(column, out, say)
    with atomic_open(out / COLUMN_JSON) as handle:
        handle.write(json.dumps(column_dict(column, calibrations), indent=2, ensure_ascii=False) + "\n")
    page = out / COLUMN_PAGE
    with atomic_open(page) as handle:
        handle.write(markdown_page(column, calibrations))
    return page
