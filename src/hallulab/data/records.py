"""Reading the canonical-schema JSONL files every stage passes on (no data-set loader, no
spaCy: the cheap stages import this and nothing heavier)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from hallulab.core.errors import RecordError
from hallulab.core.io import read_jsonl
from hallulab.data.schema import Record, record_from_dict

__all__ = ["SentenceSplitter", "load_jsonl_records", "with_sentences"]

#: texts -> each text's sentences (e.g. :meth:`hallulab.text.spacy_tokens.SpacyTokenizer.sentences`)
SentenceSplitter = Callable[[Sequence[str]], list[list[str]]]
#: (record id, field, text) triples -> raise :class:`RecordError` for one the splitter cannot
#: take (e.g. :meth:`hallulab.text.spacy_tokens.SpacyTokenizer.require_fits`)
LengthCheck = Callable[[Iterable[tuple[str, str, str]]], None]


def with_sentences(raws: Sequence[Any], split: SentenceSplitter, fits: LengthCheck | None = None) -> list[Any]:
    """Records as given, except that one with a response and no ``sentences`` key gets the
    splitter's sentences of its response (all such responses in one batch). A response the
    splitter finds no sentence in keeps its whole text as its one sentence. Records that give
    ``sentences`` keep them: the unit a label or a score refers to is the user's. ``fits``
    checks the responses to split before the splitter sees any (one too long is named)."""
    records = [dict(raw) if isinstance(raw, Mapping) else raw for raw in raws]  # a non-record fails later, named
    missing = [
        i
        for i, r in enumerate(records)
        if isinstance(r, dict) and "sentences" not in r and isinstance(r.get("response"), str) and r["response"].strip()
    ]
    if missing and fits is not None:
        fits((str(records[i].get("id", f"#{i + 1}")), "response", records[i]["response"]) for i in missing)
    if missing:
        found = split([records[i]["response"] for i in missing])
        for i, sentences in zip(missing, found, strict=True):
            records[i]["sentences"] = sentences or [records[i]["response"].strip()]
    return records


def load_jsonl_records(
    path: str | os.PathLike[str], split: SentenceSplitter | None = None, fits: LengthCheck | None = None
) -> list[Record]:
    """Read a canonical-schema JSONL file; a bad record raises naming its id (or line) and
    field; a repeated id names both lines. With ``split``, a record with a response and no
    ``sentences`` is split into sentences first (:func:`with_sentences`, ``fits`` checking
    the responses before; one too long is named with its line)."""
    numbered: Iterable[tuple[int, Any]] = read_jsonl(path)  # streamed, unless sentences are to be split
    if split is not None:
        read = list(numbered)
        try:
            split_records = with_sentences([r for _, r in read], split, fits)
        except RecordError as error:
            raise _with_line(error, read, path) from None
        numbered = zip([n for n, _ in read], split_records, strict=True)
    return numbered_records(numbered, path)


def _with_line(error: RecordError, read: Sequence[tuple[int, Any]], path: str | os.PathLike[str]) -> RecordError:
    """``error`` with ``path:line`` of the first record read whose id it names."""
    ids = [(n, str(r.get("id")) if isinstance(r, Mapping) else None) for n, r in read]
    line = next((n for n, rid in ids if rid == error.record_id), None)
    where = f" ({path}:{line})" if line is not None else f" ({path})"
    return RecordError(error.record_id, error.field_name, error.problem + where)


def numbered_records(numbered: Iterable[tuple[int, Any]], path: str | os.PathLike[str]) -> list[Record]:
    """Validate ``(line number, raw record)`` pairs read from ``path``: a bad record raises
    naming its id (or line), its field and ``path:line``; a repeated id names both lines."""
    records = []
    lines: dict[str, int] = {}
    for line_number, raw in numbered:
        try:
            record = record_from_dict(raw, position=line_number)
        except RecordError as error:
            raise RecordError(error.record_id, error.field_name, f"{error.problem} ({path}:{line_number})") from None
        if record.id in lines:
            raise RecordError(
                record.id, "id", f"duplicated ({path}:{lines[record.id]} and line {line_number}); ids must be unique"
            )
        lines[record.id] = line_number
        records.append(record)
    return records
