"""Build the token material SelfCheckGPT n-gram needs, once per data set.

For each passage: the tokens of every scored sentence, the response R split into
sentences and every sample split into sentences (as selfcheckgpt 0.1.7 does; see
:mod:`hallulab.methods.selfcheck_ngram.ngram`). All spaCy work for all n, N and aggregations
happens here, once, in batches, through the call cache.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hallulab.data.schema import Record
from hallulab.methods.selfcheck_ngram.raw import StoredCorpus

if TYPE_CHECKING:  # the cheap aggregate step reads stored tokens and never loads spaCy
    from hallulab.text.spacy_tokens import SpacyTokenizer

RESPONSE_SPLITS = ("given", "spacy")


@dataclass(frozen=True)
class NgramCorpus:
    """The token material of one passage.

    Attributes:
        sentences: tokens of each evaluated sentence r_i (original case).
        response: the response R split into sentences, each a token list.
        samples: each sample S_n split into sentences, each a token list.
    """

    sentences: Sequence[Sequence[str]]
    response: Sequence[Sequence[str]]
    samples: Sequence[Sequence[Sequence[str]]]


def build_ngram_corpora(
    records: Sequence[Record], tokenizer: SpacyTokenizer, response_split: str = "given"
) -> dict[str, NgramCorpus]:
    """Tokenise every passage; ``response_split`` chooses how R is split (config docs)."""
    if response_split not in RESPONSE_SPLITS:
        raise ValueError(f"response_split must be one of {RESPONSE_SPLITS}, got {response_split!r}")
    tokenizer.require_fits(
        (p.id, field, text)
        for p in records
        for field, text in [("response", p.response or ""), *((f"samples[{i}]", x) for i, x in enumerate(p.samples))]
    )
    sentence_tokens = iter(tokenizer.tokenize([s for p in records for s in p.sentences]))
    parsed_texts = [p.response or "" for p in records if response_split == "spacy"]
    parsed_texts += [s for p in records for s in p.samples]
    parsed = iter(tokenizer.split_sentences(parsed_texts))
    if response_split == "given":
        given = iter(tokenizer.tokenize([s.strip() for p in records for s in p.sentences]))
        responses = [[next(given) for _ in p.sentences] for p in records]
    else:
        responses = [next(parsed) for _ in records]
    corpora = {}
    for record, response in zip(records, responses, strict=True):
        corpora[record.id] = NgramCorpus(
            sentences=[next(sentence_tokens) for _ in record.sentences],
            response=response,
            samples=[next(parsed) for _ in record.samples],
        )
    return corpora


def corpora_to_dict(corpora: Mapping[str, NgramCorpus]) -> dict[str, StoredCorpus]:
    return {pid: {"sentences": c.sentences, "response": c.response, "samples": c.samples} for pid, c in corpora.items()}


def corpora_from_dict(raw: Mapping[str, StoredCorpus]) -> dict[str, NgramCorpus]:
    return {
        pid: NgramCorpus(sentences=v["sentences"], response=v["response"], samples=v["samples"])
        for pid, v in raw.items()
    }
