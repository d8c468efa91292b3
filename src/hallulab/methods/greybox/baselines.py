"""Grey-box baselines from token probabilities (SelfCheckGPT §4 / §7.1, Table 2, Table 8).

For a response R scored token by token (by the LLM that wrote it, or teacher-forced
through a proxy LLM), with p_ij the probability of token j of sentence i and H_ij the
entropy of the next-token distribution at that position:

    Avg(-log p)(i) = -(1/J) sum_j log p_ij        Max(-log p)(i) = max_j (-log p_ij)
    Avg(H)(i)      =  (1/J) sum_j H_ij            Max(H)(i)      = max_j H_ij

Passage level (§7.2): the Avg variants average over all tokens of the passage; the Max
variants average the sentence maxima. The paper's GPT-3 rows use top-5 entropy (all the
API returned); proxy-LLM rows (LLaMA, OPT, ...) use the full vocabulary, as the ``hf``
backend does here.

Tokens are assigned to sentences by character offset: each sentence's span in R comes
from the shared ``sentences`` artifact; a token belongs to the sentence containing its first
non-space character; tokens in the gaps between sentences (whitespace) belong to none. The
token statistics come from the shared ``response_tokens`` artifact (the generating model,
or teacher forcing through the ``proxy`` LLM: the paper's proxy-LLM rows).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from hallulab.core.errors import RecordError
from hallulab.core.token_stats import TokenStats
from hallulab.core.units import ScoreTable
from hallulab.data.schema import Record
from hallulab.methods.token_statistics import max_entropy, max_neglogp, mean_entropy, mean_neglogp

VARIANTS = ("avg_neglogp", "max_neglogp", "avg_entropy", "max_entropy")


@dataclass(frozen=True)
class SentenceSpans:
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    @classmethod
    def of(cls, record: Record, spans: Sequence[tuple[int, int] | None]) -> SentenceSpans:
        """From the sentence artifact's spans; a sentence without a span cannot own tokens."""
        for i, span in enumerate(spans):
            if span is None:
                raise RecordError(record.id, f"sentences[{i}]", "not found in the response text (in order)")
        located = [s for s in spans if s is not None]
        return cls(tuple(s[0] for s in located), tuple(s[1] for s in located))


def assign_tokens(spans: SentenceSpans, tokens: Sequence[TokenStats]) -> list[int]:
    """Sentence index of every token (-1: between sentences)."""
    owners = []
    for token in tokens:
        if token.offset is None:
            raise ValueError("token offsets are required to map tokens to sentences")
        anchor = token.offset + (len(token.token) - len(token.token.lstrip()))
        index = bisect.bisect_right(spans.starts, anchor) - 1
        owners.append(index if index >= 0 and anchor < spans.ends[index] else -1)
    return owners


@dataclass(frozen=True)
class PassageGreybox:
    """One passage's result: variant -> (sentence scores, passage score), and the count of
    tokens that fell between sentences."""

    variants: dict[str, tuple[list[float], float]]
    tokens_between_sentences: int


def passage_scores(
    record: Record, spans: Sequence[tuple[int, int] | None], tokens: Sequence[TokenStats]
) -> PassageGreybox:
    """Sentence scores and the passage score of each variant, for one passage."""
    owners = np.asarray(assign_tokens(SentenceSpans.of(record, spans), tokens))
    logprobs = np.asarray([t.logprob for t in tokens], dtype=np.float64)
    has_entropy = all(t.entropy is not None for t in tokens)
    entropy = np.asarray([t.entropy if t.entropy is not None else np.nan for t in tokens], dtype=np.float64)
    out: dict[str, tuple[list[float], float]] = {}
    readings = (("neglogp", logprobs, mean_neglogp, max_neglogp), ("entropy", entropy, mean_entropy, max_entropy))
    for name, values, average, maximum in readings:
        if name == "entropy" and not has_entropy:
            continue
        avg, mx = [], []
        for i in range(len(record.sentences)):
            chosen = values[owners == i]
            if chosen.size == 0:
                raise RecordError(record.id, f"sentences[{i}]", "no scored token falls inside this sentence")
            avg.append(average(chosen))
            mx.append(maximum(chosen))
        out[f"avg_{name}"] = (avg, average(values[owners >= 0]))
        out[f"max_{name}"] = (mx, float(np.mean(mx)))
    return PassageGreybox(variants=out, tokens_between_sentences=int((owners < 0).sum()))


def score_records(
    records: Sequence[Record],
    spans: Mapping[str, Sequence[tuple[int, int] | None]],
    token_stats: Mapping[str, Sequence[TokenStats]],
) -> tuple[pd.DataFrame, dict[str, object]]:
    """All four variants (two when the token source gives no entropy) over a data set:
    sentence rows and response rows, and the diagnostics."""
    per_passage = {p.id: passage_scores(p, spans[p.id], token_stats[p.id]) for p in records}
    names = [v for v in VARIANTS if all(v in s.variants for s in per_passage.values())]
    table = ScoreTable()
    for name in names:
        for record in records:
            sentence_values, passage_value = per_passage[record.id].variants[name]
            table.add_sentences(name, record.id, sentence_values, spans[record.id])
            table.add_response(name, record.id, passage_value)
    tokens_outside = sum(s.tokens_between_sentences for s in per_passage.values())
    return table.frame(), {"tokens_between_sentences": tokens_outside, "variants": names}
