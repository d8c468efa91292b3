"""Kernel Language Entropy's knob class and the kernels, Laplacians and weightings it names,
kept apart from the kernel code (SciPy) so that declaring it imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.config import setting

KERNELS = ("heat", "matern")
LAPLACIANS = ("combinatorial", "normalised")
WEIGHTINGS = ("probabilities", "classes")


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
