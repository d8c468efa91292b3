"""Degree matrix, cheap step: trace(N I - D) / N^2 of each similarity's graph (the formula is in
the package docstring)."""

from __future__ import annotations

from hallulab.methods.deg_mat.knobs import DegMatKnobs
from hallulab.methods.sample_graph import response_scores, similarity_variants
from hallulab.methods.similarity_graph import degree_uncertainty
from hallulab.pipeline.context import AggregateContext, Aggregated


def aggregate(ctx: AggregateContext[None]) -> Aggregated:
    knobs = ctx.params.typed(DegMatKnobs, "deg_mat")
    variants = similarity_variants("degmat", knobs.similarities, degree_uncertainty)
    return response_scores(ctx, variants, {"similarities": list(knobs.similarities)})
