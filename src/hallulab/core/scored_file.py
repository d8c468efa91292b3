"""A file ``hallulab score`` wrote, read back: one row per unit with its method, variant,
level, position and score (the report page and ``hallulab calibrate`` read it)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from hallulab.core.errors import UserFacingError
from hallulab.core.units import COLUMNS


class ScoredFileError(ValueError, UserFacingError):
    """A scored file the report cannot read: its path and what is missing."""


#: the suffixes of the files ``hallulab score`` writes
SCORED_SUFFIXES = (".parquet", ".csv", ".jsonl")


def read_scored(path: Path) -> pd.DataFrame:
    """A file ``hallulab score`` wrote (.parquet, .csv or .jsonl), with its unit columns; any
    other suffix, an empty file or one that does not parse is an error naming the file."""
    if path.suffix not in SCORED_SUFFIXES:
        raise ScoredFileError(
            f"{path}: unknown suffix {path.suffix!r}; a scored file is one of {list(SCORED_SUFFIXES)}"
        )
    if not path.is_file():
        raise ScoredFileError(f"{path}: no such file")
    if path.stat().st_size == 0:
        raise ScoredFileError(f"{path}: empty; not a scored file of `hallulab score`")
    try:
        frame = _read_table(path)
    except ValueError as error:  # pandas' and pyarrow's parse errors are ValueErrors
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ScoredFileError(f"{path}: not a readable {path.suffix} file ({first})") from error
    missing = [column for column in ("method", *COLUMNS) if column not in frame.columns]
    if missing:
        raise ScoredFileError(f"{path}: not a scored file of `hallulab score` (no column {missing[0]!r})")
    return frame


def _read_table(path: Path) -> pd.DataFrame:
    if path.suffix == ".csv":
        return pd.read_csv(path)
    if path.suffix == ".jsonl":
        return pd.read_json(path, lines=True)
    return pd.read_parquet(path)
