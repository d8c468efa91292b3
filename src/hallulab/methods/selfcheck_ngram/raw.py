"""What SelfCheckGPT n-gram's score step stores (:class:`hallulab.methods.raw_scores.RawScores`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hallulab.methods.raw_scores import RawScores


@dataclass
class NgramScores(RawScores):
    """``spacy``: the tokenizer's identity; ``response_split``: how the response is split;
    ``skipped_records``: records without a response or samples; ``corpora``: every passage's
    tokens (:func:`hallulab.methods.selfcheck_ngram.corpus.corpora_to_dict`);
    ``skipped_record_ids``: those records' ids, sorted (:mod:`hallulab.methods.skipped`;
    optional, as every defaulted field: a file stored before it reads as none named)."""

    spacy: dict[str, Any]
    response_split: str
    skipped_records: int
    corpora: dict[str, Any]
    skipped_record_ids: list[str] = field(default_factory=list)
