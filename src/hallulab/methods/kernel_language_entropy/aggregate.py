"""Kernel Language Entropy, cheap step: the von Neumann entropy of each kernel of the chosen
samples' semantic graph (the formula is in the package docstring, every step in :mod:`.kernel`)."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.config import setting
from hallulab.methods.kernel_language_entropy.kernel import (
    KERNELS,
    LAPLACIANS,
    WEIGHTINGS,
    KernelChoice,
    kernel_language_entropy,
)
from hallulab.methods.sample_graph import ChosenSamples, RecordScore, response_scores
from hallulab.pipeline.context import AggregateContext, Aggregated


@dataclass(frozen=True)
class KernelLanguageEntropyKnobs:
    """params ``kernel_language_entropy``."""

    kernels: tuple[str, ...] = setting(
        KERNELS,
        choices=KERNELS,
        scalar_ok=True,
        doc="heat (lm-polygraph's), matern; one variant kle_<kernel> each",
    )
    t: float = setting(0.3, above=0.0, doc="the heat kernel's time (lm-polygraph's default)")
    kappa: float = setting(1.0, above=0.0, doc="the Matérn kernel's kappa (the released code's default)")
    nu: float = setting(1.0, above=0.0, doc="the Matérn kernel's nu (the released code's default)")
    laplacian: str = setting(
        "combinatorial", choices=LAPLACIANS, doc="combinatorial D - W (lm-polygraph's), or normalised"
    )
    weights: str = setting(
        "probabilities",
        choices=WEIGHTINGS,
        doc="the edges' NLI reading under w = (1, 1/2, 0): probabilities (lm-polygraph's), or one-hot classes",
    )
    scale: bool = setting(True, doc="divide the entropy by log N (lm-polygraph's default)")
    jitter: float = setting(0.0, minimum=0.0, doc="added to the density matrix's diagonal (lm-polygraph's default 0)")

    def choice(self, kernel: str) -> KernelChoice:
        """The settings of one variant's kernel."""
        return KernelChoice(
            kernel=kernel,
            t=self.t,
            kappa=self.kappa,
            nu=self.nu,
            laplacian=self.laplacian,
            weighting=self.weights,
            scale=self.scale,
            jitter=self.jitter,
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
    variants = {f"kle_{kernel}": entropy_of(knobs.choice(kernel)) for kernel in knobs.kernels}
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
