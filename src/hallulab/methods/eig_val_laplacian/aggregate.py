"""Sum of Laplacian eigenvalues, cheap step: sum_k max(0, 1 - lambda_k) of each similarity's
normalised graph Laplacian (the formula is in the package docstring)."""

from __future__ import annotations

from hallulab.methods.eig_val_laplacian.knobs import EigValLaplacianKnobs
from hallulab.methods.sample_graph import response_scores, similarity_variants
from hallulab.methods.similarity_graph import eigenvalue_sum
from hallulab.pipeline.context import AggregateContext, Aggregated


def aggregate(ctx: AggregateContext[None]) -> Aggregated:
    knobs = ctx.params.typed(EigValLaplacianKnobs, "eig_val_laplacian")
    variants = similarity_variants("eigv", knobs.similarities, eigenvalue_sum)
    return response_scores(ctx, variants, {"similarities": list(knobs.similarities)})
