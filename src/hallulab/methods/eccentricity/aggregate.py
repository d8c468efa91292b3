"""Eccentricity, cheap step: the centred spectral embeddings' Frobenius norm of each
similarity's graph (the formula is in the package docstring)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from hallulab.core.config import setting
from hallulab.methods.sample_graph import response_scores, similarities_setting, similarity_variants
from hallulab.methods.similarity_graph import eccentricity
from hallulab.pipeline.context import AggregateContext, Aggregated


@dataclass(frozen=True)
class EccentricityKnobs:
    """params ``eccentricity``."""

    similarities: tuple[str, ...] = similarities_setting("ecc")
    threshold: float = setting(
        0.9, above=0.0, maximum=2.0, doc="the eigenvectors kept: eigenvalue below it (lm-polygraph 0.7.0's thres)"
    )


def aggregate(ctx: AggregateContext[None]) -> Aggregated:
    knobs = ctx.params.typed(EccentricityKnobs, "eccentricity")
    variants = similarity_variants("ecc", knobs.similarities, partial(eccentricity, threshold=knobs.threshold))
    return response_scores(ctx, variants, {"similarities": list(knobs.similarities), "threshold": knobs.threshold})
