"""Units and unit-level scores: the one shape every method's output takes.

Five papers score five kinds of unit: sentences (SelfCheckGPT), claims (CCP), knowledge-
graph facts (FactSelfCheck), NER facts within a response (HalluCheck) and prompts
(Self-Familiarity). Whatever the unit, a score is one row of a pandas DataFrame:

=================  ========  ===============================================================
column             dtype     meaning
=================  ========  ===============================================================
``variant``        str       the method variant; its name encodes its hyperparameters
``level``          str       the unit kind: one of :data:`LEVELS`
``record_id``      str       the passage / response / prompt the unit belongs to
``unit_id``        str       unique within (variant, level): ``<record_id>#<level><index>``
``unit_index``     int       position of the unit in its record
``sentence_index`` Int64     the sentence that holds the unit (null for response / prompt)
``start``/``end``  Int64     character span in the response (null when unknown)
``score``          float64   higher = more likely hallucinated (+inf allowed)
=================  ========  ===============================================================

Levels: ``sentence`` (a sentence of the response), ``claim`` (an atomic claim), ``fact`` (a
fact / triple), ``response`` (the whole response: SelfCheckGPT's passage score, HalluCheck's
response score) and ``prompt`` (scored before any response exists). A method emits rows at
every level it defines (SelfCheckGPT n-gram emits sentence rows and response rows, because
its passage score is a token mean, not a mean of sentence scores); :func:`reduce_to` derives
one level from another where a paper defines the reduction (max / mean over a sentence's
facts, 0.5 for a sentence without any).

The tables are written as Parquet (``pandas.read_parquet(path)`` loads one in one line).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from hallulab.core.levels import LEVELS as LEVELS
from hallulab.core.levels import MEMBER_PREFIX as MEMBER_PREFIX

COLUMNS = ("variant", "level", "record_id", "unit_id", "unit_index", "sentence_index", "start", "end", "score")
REDUCTIONS = ("max", "mean", "min")


def unit_id(record_id: str, level: str, index: int) -> str:
    """``<record_id>#<level><index>`` (``#response`` / ``#prompt`` for record-level units)."""
    if level in ("response", "prompt"):
        return f"{record_id}#{level}"
    return f"{record_id}#{level}{index}"


@dataclass
class ScoreTable:
    """Collects score rows column by column and turns them into the canonical DataFrame."""

    _columns: dict[str, list[Any]] = field(default_factory=lambda: {name: [] for name in COLUMNS})

    def add(
        self,
        variant: str,
        level: str,
        record_id: str,
        index: int,
        score: float,
        *,
        sentence_index: int | None = None,
        span: tuple[int, int] | None = None,
    ) -> None:
        if level not in LEVELS:
            raise ValueError(f"unknown unit level {level!r}; expected one of {LEVELS}")
        if isinstance(score, float) and math.isnan(score):
            raise ValueError(f"record {record_id!r}: NaN score for {variant} {level} {index}")
        values = {
            "variant": variant,
            "level": level,
            "record_id": record_id,
            "unit_id": unit_id(record_id, level, index),
            "unit_index": index,
            "sentence_index": sentence_index,
            "start": None if span is None else span[0],
            "end": None if span is None else span[1],
            "score": float(score),
        }
        for name, value in values.items():
            self._columns[name].append(value)

    def add_sentences(
        self,
        variant: str,
        record_id: str,
        scores: Sequence[float],
        spans: Sequence[tuple[int, int] | None] | None = None,
    ) -> None:
        """One row per sentence of a record (unit index = sentence index)."""
        for index, score in enumerate(scores):
            span = None if spans is None else spans[index]
            self.add(variant, "sentence", record_id, index, score, sentence_index=index, span=span)

    def add_response(self, variant: str, record_id: str, score: float) -> None:
        self.add(variant, "response", record_id, 0, score)

    def frame(self) -> pd.DataFrame:
        return score_frame(self._columns)


#: A method's per-unit details, what the report shows beside a unit (CCP's word-by-word CCP,
#: HalluCheck's decision path): written by the aggregate step that computed them, one row per
#: (unit, detail), the details of a unit in the order they read best.
DETAIL_COLUMNS = ("variant", "level", "record_id", "unit_index", "name", "value")


@dataclass
class DetailTable:
    """Collects per-unit detail rows (:data:`DETAIL_COLUMNS`)."""

    _rows: list[tuple[str, str, str, int, str, str]] = field(default_factory=list)

    def add(
        self, variant: str, level: str, record_id: str, unit_index: int, details: Iterable[tuple[str, str]]
    ) -> None:
        self._rows.extend((variant, level, record_id, int(unit_index), name, value) for name, value in details)

    def frame(self) -> pd.DataFrame:
        return detail_frame(self._rows)


def detail_frame(rows: Iterable[Sequence[Any]] = ()) -> pd.DataFrame:
    """A details DataFrame with exactly :data:`DETAIL_COLUMNS` (empty without rows)."""
    frame = pd.DataFrame(list(rows), columns=list(DETAIL_COLUMNS))
    for name in DETAIL_COLUMNS:
        frame[name] = frame[name].astype("int64" if name == "unit_index" else str)
    return frame


def details_by_unit(frame: pd.DataFrame) -> dict[tuple[str, str, str, int], tuple[tuple[str, str], ...]]:
    """(variant, level, record, unit index) -> its details, in their order."""
    out: dict[tuple[str, str, str, int], list[tuple[str, str]]] = {}
    for variant, level, record, index, name, value in frame[list(DETAIL_COLUMNS)].itertuples(index=False):
        out.setdefault((str(variant), str(level), str(record), int(index)), []).append((str(name), str(value)))
    return {key: tuple(rows) for key, rows in out.items()}


def score_frame(columns: Mapping[str, Sequence[Any]] | Iterable[Mapping[str, Any]] | None = None) -> pd.DataFrame:
    """A DataFrame with exactly :data:`COLUMNS` and their dtypes (empty when ``columns`` is None)."""
    frame = pd.DataFrame(columns if columns is not None else {name: [] for name in COLUMNS})
    missing = [name for name in COLUMNS if name not in frame.columns]
    if missing:
        raise ValueError(f"score table lacks column(s) {missing}")
    frame = frame[list(COLUMNS)].copy()
    for name in ("variant", "level", "record_id", "unit_id"):
        frame[name] = frame[name].astype(str)
    frame["unit_index"] = frame["unit_index"].astype("int64")
    for name in ("sentence_index", "start", "end"):
        frame[name] = pd.array(frame[name], dtype="Int64")
    frame["score"] = frame["score"].astype("float64")
    return frame.reset_index(drop=True)


def variants(frame: pd.DataFrame) -> list[str]:
    """Variant names in their order of first appearance."""
    return list(dict.fromkeys(frame["variant"].tolist()))


def level_rows(frame: pd.DataFrame, variant: str, level: str) -> pd.DataFrame:
    return frame[(frame["variant"] == variant) & (frame["level"] == level)]


def sentence_scores(frame: pd.DataFrame, variant: str) -> dict[str, list[float]]:
    """record id -> that variant's sentence scores in sentence order."""
    rows = level_rows(frame, variant, "sentence").sort_values(["record_id", "unit_index"], kind="stable")
    return {rid: group["score"].tolist() for rid, group in rows.groupby("record_id", sort=False)}


def record_scores(frame: pd.DataFrame, variant: str, level: str = "response") -> dict[str, float]:
    """record id -> that variant's record-level score (``response`` or ``prompt``)."""
    rows = level_rows(frame, variant, level)
    return dict(zip(rows["record_id"].tolist(), rows["score"].astype(float).tolist(), strict=True))


def reduce_to(
    frame: pd.DataFrame,
    source: str,
    target: str,
    how: str,
    *,
    sentences_per_record: Mapping[str, int] | None = None,
    empty: float | None = None,
) -> pd.DataFrame:
    """Rows at level ``target`` (``sentence`` or ``response``) from rows at level ``source``.

    ``how`` is max / mean / min over the units a sentence (or the response) holds. For a
    ``sentence`` target, ``sentences_per_record`` lists every sentence, so a sentence that holds
    no unit gets ``empty`` (FactSelfCheck's 0.5); without ``empty`` such a sentence is absent.
    """
    if how not in REDUCTIONS:
        raise ValueError(f"reduction {how!r} is not one of {REDUCTIONS}")
    if target not in ("sentence", "response"):
        raise ValueError(f"cannot reduce to level {target!r}")
    table = ScoreTable()
    rows = frame[frame["level"] == source]
    for variant in variants(frame):
        chosen = rows[rows["variant"] == variant]
        if target == "response":
            for rid, group in chosen.groupby("record_id", sort=False):
                table.add_response(variant, rid, float(getattr(np, how)(group["score"].to_numpy())))
            continue
        grouped = {
            (rid, int(s)): group["score"].to_numpy()
            for (rid, s), group in chosen.dropna(subset=["sentence_index"]).groupby(
                ["record_id", "sentence_index"], sort=False
            )
        }
        records = sentences_per_record or {rid: 0 for rid in chosen["record_id"].unique()}
        for rid, count in records.items():
            indices = range(count) if sentences_per_record else sorted(s for r, s in grouped if r == rid)
            for s in indices:
                values = grouped.get((rid, s))
                if values is not None and len(values):
                    table.add(variant, "sentence", rid, s, float(getattr(np, how)(values)), sentence_index=s)
                elif empty is not None:
                    table.add(variant, "sentence", rid, s, empty, sentence_index=s)
    return table.frame()


def concat(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    parts = [f for f in frames if len(f)]
    return score_frame(pd.concat(parts, ignore_index=True)) if parts else score_frame()
