"""FactSelfCheck, expensive step: the evaluator's yes / no for every fact of the response and
every stored sample, against the sample's knowledge graph (KG-LLM) and its text (Text-LLM).

With a white-box evaluator the same call also stores P(No) / (P(Yes) + P(No)) of the first
reply token (:func:`hallulab.core.token_stats.yes_no_probability`): the format-free reading, for an
evaluator too small to follow the reply format (this project's addition, labelled ``_pno``)."""

from __future__ import annotations

from collections import Counter

from hallulab.artifacts.knowledge_graphs import graphs_by_record
from hallulab.core.token_stats import yes_no_probability
from hallulab.llm.base import DecodingParams
from hallulab.methods.factselfcheck.knobs import FactSelfCheckScoreKnobs
from hallulab.methods.factselfcheck.raw import FactSelfCheckScores
from hallulab.methods.factselfcheck.scoring import graph_text, psi
from hallulab.methods.skipped import HAS_RESPONSE, HAS_SAMPLES, partition, present_in
from hallulab.pipeline.context import BuildContext


def score(ctx: BuildContext) -> FactSelfCheckScores:
    knobs = ctx.params.typed(FactSelfCheckScoreKnobs, "factselfcheck.score")
    graphs = graphs_by_record(ctx.artifacts["knowledge_graphs"])
    chosen = partition(ctx.records, HAS_RESPONSE, HAS_SAMPLES, present_in(graphs, "no knowledge graph"))
    chosen.warn(ctx.log, "FactSelfCheck")  # the aggregate step reports them in its diagnostics
    records = chosen.kept
    subset = records if knobs.llm_records is None else records[: knobs.llm_records]
    counts: Counter[str] = Counter()
    answers: dict[str, dict[str, list[list[float | None]]]] = {}
    no_probabilities: dict[str, dict[str, list[list[float | None]]]] = {}
    calls: Counter[str] = Counter()
    if knobs.llm_variants and subset:
        llm = ctx.resources.llm("evaluator")
        white_box = knobs.top_k > 0 and llm.capabilities.top_k_alternatives
        params = DecodingParams(
            max_new_tokens=knobs.max_new_tokens, temperature=0.0, top_k_alternatives=knobs.top_k if white_box else 0
        )
        for variant in knobs.llm_variants:
            template = ctx.resources.prompt(f"factselfcheck.{variant}_prompt")
            prompts, slots = [], []
            for record in subset:
                graph = graphs[record.id]
                facts = graph.passage_kg
                for f_index, fact in enumerate(facts):
                    for s_index, sample in enumerate(record.samples):
                        context = graph_text(graph.sample_kgs[s_index]) if variant == "kg" else sample
                        key = "knowledge_graph" if variant == "kg" else "text"
                        prompts.append(template.messages(fact=fact.text(), **{key: context}))
                        slots.append((record.id, f_index, s_index, len(facts), len(record.samples)))
            calls[f"{variant}_llm"] = len(prompts)
            replies = llm.generate(prompts, params) if prompts else []
            for (rid, f_index, s_index, n_facts, n_samples), reply in zip(slots, replies, strict=True):
                table = answers.setdefault(variant, {}).setdefault(rid, [[None] * n_samples for _ in range(n_facts)])
                value = psi(reply.text)
                counts[f"{variant}_answers_invalid"] += value is None
                counts[f"{variant}_answers"] += 1
                table[f_index][s_index] = value
                if white_box:
                    shares = no_probabilities.setdefault(variant, {}).setdefault(
                        rid, [[None] * n_samples for _ in range(n_facts)]
                    )
                    share = yes_no_probability(reply.tokens)
                    counts[f"{variant}_pno_missing"] += share is None
                    shares[f_index][s_index] = share
    ctx.log.info("FactSelfCheck: %s on %d of %d records", dict(counts), len(subset), len(records))
    return FactSelfCheckScores(
        llm_variants=list(knobs.llm_variants),
        llm_records=[p.id for p in subset],
        evaluator=ctx.resources.llm_name("evaluator") if knobs.llm_variants and subset else None,
        answers=answers,
        no_probabilities=no_probabilities,
        llm_calls=dict(calls),
        diagnostics=dict(counts),
    )
