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


def score_units(records: Sequence[Record]) -> tuple[ScoreTable, Counter[str]]:
    """One row per unit a record holds (module docstring of :mod:`hallulab.methods.length`),
    and the count of units scored at each level."""
    table = ScoreTable()
    counts: Counter[str] = Counter()
    for record in records:
        for index, claim in enumerate(record.claims):
            table.add(VARIANT, "claim", record.id, index, token_count(claim.text), sentence_index=claim.sentence_index)
            counts["claims_scored"] += 1
        table.add_sentences(VARIANT, record.id, [token_count(sentence) for sentence in record.sentences])
        counts["sentences_scored"] += len(record.sentences)
        if record.response is not None:
            table.add_response(VARIANT, record.id, token_count(record.response))
            counts["responses_scored"] += 1
        if record.prompt is not None:
            table.add(VARIANT, "prompt", record.id, 0, token_count(record.prompt))
            counts["prompts_scored"] += 1
    return table, counts


def aggregate(ctx: AggregateContext[None]) -> Aggregated:
    table, counts = score_units(ctx.records)
    return Aggregated(table.frame(), {**dict(counts), "tokens": TOKEN.pattern})
