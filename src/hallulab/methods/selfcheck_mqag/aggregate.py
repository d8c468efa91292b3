"""SelfCheckGPT MQAG, cheap step: counting / Bayes / Bayes + alpha over the chosen N samples."""

from __future__ import annotations

from hallulab.methods.sample_matrix import selected_columns, selection_from
from hallulab.methods.selfcheck_mqag.knobs import MQAGScoringKnobs
from hallulab.methods.selfcheck_mqag.raw import StoredMQAG
from hallulab.methods.selfcheck_mqag.scoring import aggregate as aggregate_questions
from hallulab.pipeline.context import AggregateContext, Aggregated


def aggregate(ctx: AggregateContext[StoredMQAG]) -> Aggregated:
    scoring = ctx.params.typed(MQAGScoringKnobs, "selfcheck_mqag.aggregate")
    selection = selection_from(ctx.params)
    frame, diagnostics = aggregate_questions(
        ctx.raw, scoring, lambda pid, available: selected_columns(pid, available, selection)
    )
    return Aggregated(frame, diagnostics)
