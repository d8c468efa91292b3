"""Grey-box baselines: sentence and passage scores from the stored token statistics."""

from __future__ import annotations

from collections import Counter

from hallulab.artifacts.response_tokens import token_stats
from hallulab.artifacts.sentences import spans_by_record
from hallulab.methods.greybox.baselines import score_records
from hallulab.methods.skipped import HAS_RESPONSE, partition, present_in
from hallulab.pipeline.context import AggregateContext, Aggregated


def aggregate(ctx: AggregateContext[None]) -> Aggregated:
    raw_tokens = ctx.artifacts["response_tokens"]
    tokens = token_stats(raw_tokens)
    chosen = partition(ctx.records, HAS_RESPONSE, present_in(tokens, "no token statistics"))
    chosen.warn(ctx.log, "Grey-box")
    frame, diagnostics = score_records(chosen.kept, spans_by_record(ctx.artifacts["sentences"]), tokens)
    diagnostics["token_source"] = dict(Counter(raw_tokens["sources"].values()))
    diagnostics["llm"] = raw_tokens.get("llm", {})
    diagnostics.update(chosen.diagnostics())
    return Aggregated(frame, diagnostics)
