"""FactSelfCheck, cheap step: fact scores for the chosen N samples and every variant, sentence
scores by max / mean (0.5 without facts), response score = mean of the sentence scores.
A claim given by the data set (FactualBio's labelled atomic facts) scores like a sentence:
the max or the mean of its triples' scores, 0.5 without triples (level ``claim``, the level
its human labels evaluate; the triples themselves are level ``fact``).
``fsc_kg_llm_pno_*`` / ``fsc_text_pno_*`` put the evaluator's P(No) share in place of Psi in
Eq. 8 / 10 (white-box evaluators only; see :mod:`hallulab.methods.factselfcheck.score`)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np

from hallulab.artifacts.knowledge_graphs import graphs_by_record
from hallulab.core.units import ScoreTable
from hallulab.methods.factselfcheck.knobs import FactSelfCheckKnobs
from hallulab.methods.factselfcheck.raw import FactSelfCheckScores
from hallulab.methods.factselfcheck.scoring import defined_scores, frequency_score, llm_score, sentence_score
from hallulab.methods.sample_matrix import sample_choice_from, selected_columns
from hallulab.methods.skipped import HAS_RESPONSE, HAS_SAMPLES, partition, present_in
from hallulab.pipeline.context import AggregateContext, Aggregated
from hallulab.pipeline.controls import AggregateControls


def aggregate(ctx: AggregateContext[FactSelfCheckScores]) -> Aggregated:
    knobs = ctx.params.typed(FactSelfCheckKnobs, "factselfcheck.aggregate")
    selection = sample_choice_from(ctx.params)
    graphs = graphs_by_record(ctx.artifacts["knowledge_graphs"])
    chosen = partition(ctx.records, HAS_RESPONSE, HAS_SAMPLES, present_in(graphs, "no knowledge graph"))
    chosen.warn(ctx.log, "FactSelfCheck")
    records = chosen.kept
    table = ScoreTable()
    counts: Counter[str] = Counter()
    for record in records:
        graph = graphs[record.id]
        columns = [int(i) for i in selected_columns(record.id, len(graph.sample_kgs), selection)]
        facts = graph.passage_kg
        per_variant: dict[str, list[float | None]] = {
            "fsc_kg_freq": [frequency_score(f, [graph.sample_kgs[i] for i in columns]) for f in facts],
            "fsc_random_fact": [
                random.Random(f"{knobs.random_seed}:{record.id}:{i}").random() for i in range(len(facts))
            ],
        }
        for variant in ctx.raw.llm_variants:
            stored = ctx.raw.answers.get(variant, {}).get(record.id)
            if stored is None:
                continue
            name = "fsc_kg_llm" if variant == "kg" else "fsc_text"
            per_variant[name] = [llm_score([row[i] for i in columns]) for row in stored]
            counts[f"{name}_facts_without_valid_answers"] += sum(v is None for v in per_variant[name])
            shares = ctx.raw.no_probabilities.get(variant, {}).get(record.id)
            if shares is not None:  # the format-free reading: mean P(No) share over the samples
                per_variant[f"{name}_pno"] = [llm_score([row[i] for i in columns]) for row in shares]
                counts[f"{name}_pno_facts_without_shares"] += sum(v is None for v in per_variant[f"{name}_pno"])
        for base, scores in per_variant.items():
            by_fact = dict(zip(facts, scores, strict=True))
            occurrence = 0  # a fact row per (sentence, triple): a triple may occur in two sentences
            for s_index, kg in enumerate(graph.sentence_kgs):
                for fact in kg:
                    value = by_fact[fact]
                    if value is not None:
                        table.add(base, "fact", record.id, occurrence, float(value), sentence_index=s_index)
                    occurrence += 1
            aggregations = ("mean",) if base == "fsc_random_fact" else knobs.aggregations
            for aggregation in aggregations:
                name = f"{base}_{aggregation}"
                sentence_values = []
                for s_index, kg in enumerate(graph.sentence_kgs):
                    fact_scores = defined_scores(kg, by_fact)
                    counts[f"{name}_sentences_without_facts"] += not fact_scores
                    value = sentence_score(fact_scores, aggregation)
                    sentence_values.append(value)
                    table.add(name, "sentence", record.id, s_index, value, sentence_index=s_index)
                table.add_response(name, record.id, float(np.mean(sentence_values)) if sentence_values else 0.5)
                for c_index, kg in enumerate(graph.claim_kgs):  # given claims: Eq. 11 over the claim's triples
                    fact_scores = defined_scores(kg, by_fact)
                    counts[f"{name}_claims_without_facts"] += not fact_scores
                    table.add(name, "claim", record.id, c_index, sentence_score(fact_scores, aggregation))
    artifact = ctx.artifacts["knowledge_graphs"]
    diagnostics: dict[str, Any] = {
        **ctx.raw.diagnostics,
        **dict(counts),
        "extractor": artifact.get("extractor"),
        "extractor_substitute": artifact.get("substitute"),
        "extractor_llm": artifact.get("extractor_llm"),
        "evaluator": ctx.raw.evaluator,
        "llm_records": len(ctx.raw.llm_records),
        "table8": artifact.get("table8"),
        # the extraction's own counts: malformed replies and lines, sentences and samples
        # without a triple, sentence triples outside E_p / R_p (hallulab.artifacts.knowledge_graphs)
        "extraction": artifact.get("diagnostics", {}),
        "table9_llm_calls": {**artifact.get("llm_calls", {}), **ctx.raw.llm_calls},
        **chosen.diagnostics(),
    }
    headline = (
        "fsc_kg_freq_max",
        "fsc_kg_llm_max",
        "fsc_text_max",
        "fsc_kg_llm_pno_max",
        "fsc_text_pno_max",
        "fsc_random_fact_mean",
    )
    return Aggregated(table.frame(), diagnostics, AggregateControls(headline_variants=headline))
