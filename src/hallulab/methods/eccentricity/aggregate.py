"""Eccentricity, cheap step: the centred spectral embeddings' Frobenius norm of each
similarity's graph (the formula is in the package docstring)."""

from __future__ import annotations

from functools import partial

from hallulab.methods.eccentricity.knobs import EccentricityKnobs
from hallulab.methods.sample_graph import response_scores, similarity_variants
from hallulab.methods.similarity_graph import eccentricity
from hallulab.pipeline.context import AggregateContext, Aggregated


def aggregate(ctx: AggregateContext[None]) -> Aggregated:
    knobs = ctx.params.typed(EccentricityKnobs, "eccentricity")
    variants = similarity_variants("ecc", knobs.similarities, partial(eccentricity, threshold=knobs.threshold))
    return response_scores(ctx, variants, {"similarities": list(knobs.similarities), "threshold": knobs.threshold})
