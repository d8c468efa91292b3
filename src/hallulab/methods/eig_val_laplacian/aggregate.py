"""Sum of Laplacian eigenvalues, cheap step: sum_k max(0, 1 - lambda_k) of each similarity's
normalised graph Laplacian (the formula is in the package docstring)."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.config import setting
from hallulab.methods.sample_graph import response_scores, similarity_variants
from hallulab.methods.similarity_graph import SIMILARITIES, eigenvalue_sum
from hallulab.pipeline.context import AggregateContext, Aggregated


@dataclass(frozen=True)
class EigValLaplacianKnobs:
    """params ``eig_val_laplacian``."""

    similarities: tuple[str, ...] = setting(
        SIMILARITIES,
        choices=SIMILARITIES,
        scalar_ok=True,
        doc="the graph's weights: entail (NLI entailment, lm-polygraph's default), contra (1 - NLI "
        "contradiction), jaccard (word sets); one variant eigv_<similarity> each",
    )


def aggregate(ctx: AggregateContext[None]) -> Aggregated:
    knobs = ctx.params.typed(EigValLaplacianKnobs, "eig_val_laplacian")
    variants = similarity_variants("eigv", knobs.similarities, eigenvalue_sum)
    return response_scores(ctx, variants, {"similarities": list(knobs.similarities)})
