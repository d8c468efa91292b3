"""The semantic kernel of Kernel Language Entropy and its von Neumann entropy (Nikitin, Kossen,
Gal and Marttinen, 2024, "Kernel Language Entropy: Fine-grained Uncertainty Quantification for
LLMs from Semantic Similarities", §3), as pure functions of one record's NLI pair matrix.

1. **Semantic graph** over the N chosen samples, no self-loops: the weight of the edge a-b is
   W[a][b] = w . p(a, b) + w . p(b, a), p(a, b) the NLI class probabilities (entailment,
   neutral, contradiction) with premise a and hypothesis b and w = (1, 1/2, 0) (:data:`CLASS_WEIGHTS`);
   ``probabilities`` reads p as the NLI model's probabilities (lm-polygraph 0.7.0's
   ``KernelLanguageEntropy``), ``classes`` as the one-hot most probable class (the weights of
   the authors' released weighted graph).
2. **Laplacian** L = D - W, D = diag(sum_b W[a][b]) (``combinatorial``, lm-polygraph's and the
   paper's default), or D^{-1/2} (D - W) D^{-1/2} (``normalised``, the released code's other
   graph kernels; a sample without any edge gets a zero row).
3. **Kernel**, a function of L's spectrum L = U diag(lambda) U^T:
   ``heat`` K = exp(-t L) = U diag(exp(-t lambda)) U^T; ``matern``
   K = (2 nu / kappa^2 I + L)^{-nu} = U diag((2 nu / kappa^2 + lambda)^{-nu}) U^T.
4. **Density matrix**: rho[a][b] = K[a][b] / ((sqrt K[a][a] + g)(sqrt K[b][b] + g)) / N, unit
   diagonal divided by N, so unit trace; g = 1e-12 (:data:`DIAGONAL_GUARD`), the guard of the
   released code and of lm-polygraph.
5. **KLE** = VNE(rho) = -Tr(rho log rho) = -sum_k mu_k log mu_k over the eigenvalues mu_k of
   rho + jitter I with |mu_k| > 1e-8 (:data:`EIGENVALUE_FLOOR`, both released codes' cut);
   scaled, divided by log N, the entropy of N samples of N different meanings.

Higher means more semantic spread among the samples: more likely a hallucination.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import eigh, eigvalsh

from hallulab.artifacts.nli_pair_matrix import PairMatrix
from hallulab.methods.kernel_language_entropy.knobs import KERNELS, LAPLACIANS, WEIGHTINGS

#: w: the weight of a directed edge's entailment, neutral and contradiction (§3, the semantic graph)
CLASS_WEIGHTS = np.array([1.0, 0.5, 0.0])
#: eigenvalues of the density matrix at or below this magnitude add nothing to the entropy
EIGENVALUE_FLOOR = 1e-8
#: added to sqrt(K[a][a]) before the kernel's diagonal is divided out
DIAGONAL_GUARD = 1e-12


@dataclass(frozen=True)
class KernelChoice:
    """Which kernel of the samples' graph, with its parameters, and how its entropy is read."""

    kernel: str = "heat"
    t: float = 0.3
    kappa: float = 1.0
    nu: float = 1.0
    laplacian: str = "combinatorial"
    weighting: str = "probabilities"
    scale: bool = True
    jitter: float = 0.0

    def __post_init__(self) -> None:
        for name, value, allowed in (
            ("kernel", self.kernel, KERNELS),
            ("laplacian", self.laplacian, LAPLACIANS),
            ("weighting", self.weighting, WEIGHTINGS),
        ):
            if value not in allowed:
                raise ValueError(f"kernel choice: {name} {value!r} is not one of {allowed}")


def semantic_graph(pairs: PairMatrix, weighting: str) -> np.ndarray:
    """W[a][b] = w . p(a, b) + w . p(b, a) for a != b, 0 on the diagonal (step 1)."""
    probs = np.stack([pairs.entail, pairs.neutral, pairs.contra], axis=-1)
    if weighting == "classes":
        probs = np.eye(3)[probs.argmax(axis=-1)]
    elif weighting != "probabilities":
        raise ValueError(f"weighting {weighting!r} is not one of {WEIGHTINGS}")
    directed = probs @ CLASS_WEIGHTS
    weights = directed + directed.T
    np.fill_diagonal(weights, 0.0)
    return weights


def graph_laplacian(weights: np.ndarray, laplacian: str) -> np.ndarray:
    """D - W, or D^{-1/2} (D - W) D^{-1/2} with a zero row for a node of degree 0 (step 2)."""
    degrees = weights.sum(axis=1)
    combinatorial = np.diag(degrees) - weights
    if laplacian == "combinatorial":
        return combinatorial
    if laplacian != "normalised":
        raise ValueError(f"laplacian {laplacian!r} is not one of {LAPLACIANS}")
    scale = np.zeros_like(degrees)
    connected = degrees > 0
    scale[connected] = 1 / np.sqrt(degrees[connected])
    return scale[:, None] * combinatorial * scale[None, :]


def graph_kernel(laplacian: np.ndarray, choice: KernelChoice) -> np.ndarray:
    """The heat or Matérn kernel of a symmetric Laplacian, through its spectrum (step 3)."""
    values, vectors = eigh(laplacian)
    if choice.kernel == "heat":
        spectrum = np.exp(-choice.t * values)
    else:
        spectrum = (2 * choice.nu / choice.kappa**2 + values) ** -choice.nu
    return np.asarray((vectors * spectrum) @ vectors.T)


def density_matrix(kernel: np.ndarray) -> np.ndarray:
    """The kernel with its diagonal divided out, over N: a unit-trace density matrix (step 4)."""
    root = np.sqrt(np.diag(kernel)) + DIAGONAL_GUARD
    return np.asarray(kernel / np.outer(root, root) / kernel.shape[0])


def von_neumann_entropy(density: np.ndarray, jitter: float = 0.0) -> float:
    """-sum mu log mu over the eigenvalues of ``density + jitter I`` above the floor (step 5)."""
    values = eigvalsh(density + jitter * np.eye(density.shape[0]))
    kept = values[np.abs(values) > EIGENVALUE_FLOOR]
    if np.any(kept < 0):
        raise ValueError(f"the kernel is not positive semi-definite: eigenvalue {kept.min():.3g}")
    return float(-np.sum(kept * np.log(kept)))


def kernel_language_entropy(pairs: PairMatrix, choice: KernelChoice) -> float:
    """KLE of one record's chosen samples (steps 1 to 5); needs two samples or more."""
    n = pairs.size
    if n < 2:
        raise ValueError(f"kernel language entropy needs two samples or more, got {n}")
    laplacian = graph_laplacian(semantic_graph(pairs, choice.weighting), choice.laplacian)
    entropy = von_neumann_entropy(density_matrix(graph_kernel(laplacian, choice)), choice.jitter)
    return entropy / float(np.log(n)) if choice.scale else entropy
