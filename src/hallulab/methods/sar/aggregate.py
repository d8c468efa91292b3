"""SAR, cheap step: SentenceSAR and SAR over the chosen samples at the temperature t, and the
response's TokenSAR (the formulas are in :mod:`hallulab.methods.sar.formula`)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from hallulab.core.units import ScoreTable
from hallulab.methods.sample_matrix import sample_choice_from, selected_columns
from hallulab.methods.sar.formula import sar, sentence_sar
from hallulab.methods.sar.knobs import SarKnobs
from hallulab.methods.sar.raw import SarScores
from hallulab.pipeline.context import AggregateContext, Aggregated


def aggregate(ctx: AggregateContext[SarScores]) -> Aggregated:
    knobs = ctx.params.typed(SarKnobs, "sar.aggregate")
    selection = sample_choice_from(ctx.params)
    stored = ctx.raw
    table = ScoreTable()
    counts: Counter[str] = Counter()
    for record in ctx.records:
        stored_record = stored.records.get(record.id)
        if stored_record is None:
            continue
        if stored_record["response_token_sar"] is not None:
            table.add_response("token_sar", record.id, stored_record["response_token_sar"])
        chosen = selected_columns(record.id, len(stored_record["log_probs"]), selection)
        similarity = np.asarray(stored_record["similarity"], dtype=np.float64)[np.ix_(chosen, chosen)]
        log_probs = [v for i in chosen if (v := stored_record["log_probs"][int(i)]) is not None]
        if len(log_probs) < len(chosen):
            counts["sentence_sar_records_with_an_empty_sample"] += 1
        else:
            table.add_response("sentence_sar", record.id, sentence_sar(log_probs, similarity, knobs.temperature))
        if "token_sar" in stored_record:
            token_sars = [v for i in chosen if (v := stored_record["token_sar"][int(i)]) is not None]
            if len(token_sars) < len(chosen):
                counts["sar_records_with_a_sample_without_token_sar"] += 1
            else:
                table.add_response("sar", record.id, sar(token_sars, similarity, knobs.temperature))
        counts["records_scored"] += 1
    diagnostics = {
        **stored.diagnostics,
        **dict(counts),
        "num_samples": selection.used,
        "temperature": knobs.temperature,
        "token_relevance": stored.token_relevance,
        "similarity": stored.similarity.get("name"),
        "proxy": stored.proxy.get("model"),
    }
    return Aggregated(table.frame(), diagnostics)
