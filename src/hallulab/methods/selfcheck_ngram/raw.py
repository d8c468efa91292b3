"""What SelfCheckGPT n-gram's score step stores (:class:`hallulab.methods.raw_scores.RawScores`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from hallulab.methods.raw_scores import RawScores


class StoredCorpus(TypedDict):
    """One passage's tokens as stored (:class:`hallulab.methods.selfcheck_ngram.corpus.NgramCorpus`):
    each scored sentence's tokens, the response split into sentences of tokens, and each sample
    split into sentences of tokens."""

    sentences: Sequence[Sequence[str]]
    response: Sequence[Sequence[str]]
    samples: Sequence[Sequence[Sequence[str]]]


@dataclass
class NgramScores(RawScores):
    """``spacy``: the tokenizer's identity (:attr:`hallulab.text.spacy_tokens.SpacyTokenizer.identity`);
    ``response_split``: how the response is split;
    ``skipped_records``: records without a response or samples; ``corpora``: every passage's
    tokens (:func:`hallulab.methods.selfcheck_ngram.corpus.corpora_to_dict`);
    ``skipped_record_ids``: those records' ids, sorted (:mod:`hallulab.methods.skipped`;
    optional, as every defaulted field: a file stored before it reads as none named)."""

    spacy: dict[str, str]
    response_split: str
    skipped_records: int
    corpora: dict[str, StoredCorpus]
    skipped_record_ids: list[str] = field(default_factory=list)
