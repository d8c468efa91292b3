"""Kernel Language Entropy, cheap step: the von Neumann entropy of each kernel of the chosen
samples' semantic graph (the formula is in the package docstring, every step in :mod:`.kernel`)."""

from __future__ import annotations

from hallulab.methods.kernel_language_entropy.kernel import KernelChoice, kernel_language_entropy
from hallulab.methods.kernel_language_entropy.knobs import KernelLanguageEntropyKnobs
from hallulab.methods.sample_graph import ChosenSamples, RecordScore, response_scores
from hallulab.pipeline.context import AggregateContext, Aggregated


def kernel_choice(knobs: KernelLanguageEntropyKnobs, kernel: str) -> KernelChoice:
    """The settings of one variant's kernel."""
    return KernelChoice(
        kernel=kernel,
        t=knobs.t,
        kappa=knobs.kappa,
        nu=knobs.nu,
        laplacian=knobs.laplacian,
        weighting=knobs.weights,
        scale=knobs.scale,
        jitter=knobs.jitter,
    )


def entropy_of(choice: KernelChoice) -> RecordScore:
    """One record's KLE under ``choice``."""

    def score(record: ChosenSamples) -> float:
        try:
            return kernel_language_entropy(record.pairs, choice)
        except ValueError as error:
            raise ValueError(f"nli_pair_matrix: record {record.record_id!r}: {error}") from error

    return score


def aggregate(ctx: AggregateContext[None]) -> Aggregated:
    knobs = ctx.params.typed(KernelLanguageEntropyKnobs, "kernel_language_entropy")
    variants = {f"kle_{kernel}": entropy_of(kernel_choice(knobs, kernel)) for kernel in knobs.kernels}
    settings = {
        "kernels": list(knobs.kernels),
        "t": knobs.t,
        "kappa": knobs.kappa,
        "nu": knobs.nu,
        "laplacian": knobs.laplacian,
        "weights": knobs.weights,
        "scale": knobs.scale,
        "jitter": knobs.jitter,
    }
    return response_scores(ctx, variants, settings)
