"""Sentence units of every response, with their character spans.

Each sentence r_i of a record (as the data set splits the response; generated responses are
split by the ``generate`` stage) is located in the response text in order: the span is the
first occurrence of the stripped sentence at or after the end of the previous one. A
sentence that cannot be located keeps a null span and is counted; methods that need spans
(token-to-sentence mapping) report it by record and sentence.

Table columns: ``record_id``, ``sentence_index``, ``start``, ``end`` (null when not
located), ``text``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hallulab.pipeline.spec import ArtifactSpec

if TYPE_CHECKING:
    import pandas as pd

SPEC = ArtifactSpec(
    name="sentences",
    description="sentence units of every response with character spans",
    suffix="parquet",
)

Span = tuple[int, int]


def locate(response: str, sentences: Sequence[str]) -> list[Span | None]:
    """Character span of each sentence in ``response``, found in order (None: not found)."""
    spans: list[Span | None] = []
    cursor = 0
    for sentence in sentences:
        needle = sentence.strip()
        position = response.find(needle, cursor) if needle else -1
        if position == -1:
            spans.append(None)
            continue
        spans.append((position, position + len(needle)))
        cursor = position + len(needle)
    return spans


def spans_by_record(frame: pd.DataFrame) -> dict[str, list[Span | None]]:
    """record id -> the span of each sentence, in sentence order."""
    import pandas as pd  # here, not above: the artifact's declaration is imported with every spec

    out: dict[str, list[Span | None]] = {}
    ordered = frame.sort_values(["record_id", "sentence_index"], kind="stable")
    for rid, group in ordered.groupby("record_id", sort=False):
        out[str(rid)] = [
            None if pd.isna(start) else (int(start), int(end))
            for start, end in zip(group["start"], group["end"], strict=True)
        ]
    return out
