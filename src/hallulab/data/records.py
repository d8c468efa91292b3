"""Reading the canonical-schema JSONL files every stage passes on (no data-set loader, no
spaCy: the cheap stages import this and nothing heavier)."""

from __future__ import annotations

import os

from hallulab.core.errors import RecordError
from hallulab.core.io import read_jsonl
from hallulab.data.schema import Passage, passage_from_dict

__all__ = ["load_jsonl_passages"]


def load_jsonl_passages(path: str | os.PathLike[str]) -> list[Passage]:
    """Read a canonical-schema JSONL file; a bad record raises naming its id (or line) and
    field; a repeated id names both lines."""
    passages = []
    lines: dict[str, int] = {}
    for line_number, raw in read_jsonl(path):
        try:
            passage = passage_from_dict(raw, position=line_number)
        except RecordError as error:
            raise RecordError(error.record_id, error.field_name, f"{error.problem} ({path}:{line_number})") from None
        if passage.id in lines:
            raise RecordError(
                passage.id, "id", f"duplicated ({path}:{lines[passage.id]} and line {line_number}); ids must be unique"
            )
        lines[passage.id] = line_number
        passages.append(passage)
    return passages
