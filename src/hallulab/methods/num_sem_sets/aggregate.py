"""Number of Semantic Sets, cheap step: the connected components of the chosen samples' mutual
entailment graph (the formula is in the package docstring)."""

from __future__ import annotations

from hallulab.methods.sample_graph import ChosenSamples, response_scores
from hallulab.methods.similarity_graph import semantic_sets
from hallulab.pipeline.context import AggregateContext, Aggregated


def number_of_sets(record: ChosenSamples) -> float:
    return float(semantic_sets(record.pairs.entail, record.pairs.contra))


def aggregate(ctx: AggregateContext[None]) -> Aggregated:
    return response_scores(ctx, {"num_sem_sets": number_of_sets}, {})
