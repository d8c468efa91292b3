"""Unit length, the aggregate step: every unit a record holds scored by its token count."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from hallulab.core.units import ScoreTable
from hallulab.data.schema import Record
from hallulab.methods.length.tokens import TOKEN, token_count
from hallulab.pipeline.context import AggregateContext, Aggregated

#: the one variant: the length in tokens
VARIANT = "length_tokens"


def score_units(passages: Sequence[Record]) -> tuple[ScoreTable, Counter[str]]:
    """One row per unit a record holds (module docstring of :mod:`hallulab.methods.length`),
    and the count of units scored at each level."""
    table = ScoreTable()
    counts: Counter[str] = Counter()
    for passage in passages:
        for index, claim in enumerate(passage.claims):
            table.add(VARIANT, "claim", passage.id, index, token_count(claim.text), sentence_index=claim.sentence_index)
            counts["claims_scored"] += 1
        table.add_sentences(VARIANT, passage.id, [token_count(sentence) for sentence in passage.sentences])
        counts["sentences_scored"] += len(passage.sentences)
        if passage.response is not None:
            table.add_response(VARIANT, passage.id, token_count(passage.response))
            counts["responses_scored"] += 1
        if passage.prompt is not None:
            table.add(VARIANT, "prompt", passage.id, 0, token_count(passage.prompt))
            counts["prompts_scored"] += 1
    return table, counts


def aggregate(ctx: AggregateContext[None]) -> Aggregated:
    table, counts = score_units(ctx.records)
    return Aggregated(table.frame(), {**dict(counts), "tokens": TOKEN.pattern})
