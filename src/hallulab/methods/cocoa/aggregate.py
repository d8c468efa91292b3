"""CoCoA, cheap step: the response's confidence from its token statistics times its mean
dissimilarity to the chosen samples (the formulas are in :mod:`hallulab.methods.cocoa.formula`)."""

from __future__ import annotations

from collections import Counter

from hallulab.artifacts.response_tokens import token_stats
from hallulab.core.units import ScoreTable
from hallulab.methods.cocoa.formula import cocoa_msp, cocoa_mte, cocoa_ppl
from hallulab.methods.cocoa.raw import CocoaScores
from hallulab.methods.sample_matrix import sample_choice_from, selected_columns
from hallulab.pipeline.context import AggregateContext, Aggregated


def aggregate(ctx: AggregateContext[CocoaScores]) -> Aggregated:
    selection = sample_choice_from(ctx.params)
    stored = ctx.raw
    raw_tokens = ctx.artifacts["response_tokens"]
    tokens = token_stats(raw_tokens)
    table = ScoreTable()
    counts: Counter[str] = Counter()
    for record in ctx.records:
        similarity = stored.records.get(record.id)
        if similarity is None:
            continue
        stats = tokens.get(record.id, [])
        if not stats:
            counts["records_without_response_tokens"] += 1
            continue
        chosen = [similarity[int(i)] for i in selected_columns(record.id, len(similarity), selection)]
        log_likelihoods = [t.logprob for t in stats]
        table.add_response("cocoa_msp", record.id, cocoa_msp(log_likelihoods, chosen))
        table.add_response("cocoa_ppl", record.id, cocoa_ppl(log_likelihoods, chosen))
        entropies = [t.entropy for t in stats if t.entropy is not None]
        if len(entropies) < len(stats):
            counts["cocoa_mte_records_without_entropies"] += 1
        else:
            table.add_response("cocoa_mte", record.id, cocoa_mte(entropies, chosen))
        counts["records_scored"] += 1
    diagnostics = {
        **stored.diagnostics,
        **dict(counts),
        "num_samples": selection.used,
        "similarity": stored.similarity.get("name"),
        "token_source": dict(Counter(raw_tokens["sources"].values())),
        "llm": raw_tokens.get("llm", {}),
    }
    return Aggregated(table.frame(), diagnostics)
