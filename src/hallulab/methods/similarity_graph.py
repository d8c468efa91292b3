"""The similarity graph of a record's samples and the spectral uncertainty measures of Lin,
Trivedi and Sun (2023), "Generating with Confidence: Uncertainty Quantification for Black-box
Large Language Models", §3, as lm-polygraph 0.7.0's ``NumSemSets``, ``EigValLaplacian``,
``DegMat`` and ``Eccentricity`` compute them.

The graph's weights W (N x N, the diagonal included) come from one of three similarities
(:data:`SIMILARITIES`, §3.1):

* ``entail``: W = (E + E^T) / 2, E[a][b] = p(entailment | premise s_a, hypothesis s_b);
* ``contra``: W = ((1 - C) + (1 - C)^T) / 2, C the contradiction probabilities;
* ``jaccard``: W[a][b] = |w(s_a) & w(s_b)| / |w(s_a) | w(s_b)|, w(s) the set of s's
  whitespace-separated words in lower case (0 for two empty sets), W[a][a] = 1.

With the degree matrix D = diag(sum_b W[a][b]), the symmetric normalised Laplacian is
L = I - D^{-1/2} W D^{-1/2} (§3.2), whose eigenvalues lambda_1 <= ... <= lambda_N the spectral
measures read.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.linalg import eigh

from hallulab.artifacts.nli_pair_matrix import PairMatrix
from hallulab.methods.graph_knobs import SIMILARITIES


def jaccard_matrix(texts: Sequence[str]) -> np.ndarray:
    """W[a][b] = Jaccard similarity of the lower-cased word sets of texts a and b; 1 on the diagonal."""
    words = [set(text.lower().split()) for text in texts]
    matrix = np.eye(len(texts))
    for a in range(len(texts)):
        for b in range(a + 1, len(texts)):
            union = len(words[a] | words[b])
            value = len(words[a] & words[b]) / union if union else 0.0
            matrix[a, b] = matrix[b, a] = value
    return matrix


def similarity_matrix(pairs: PairMatrix, texts: Sequence[str], similarity: str) -> np.ndarray:
    """The graph's weights W of one record (module docstring), from its NLI pair matrix
    (``entail``, ``contra``) or its sample texts (``jaccard``)."""
    if similarity == "jaccard":
        return jaccard_matrix(texts)
    if similarity == "entail":
        affinity = pairs.entail
    elif similarity == "contra":
        affinity = 1 - pairs.contra
    else:
        raise ValueError(f"similarity {similarity!r} is not one of {SIMILARITIES}")
    return (affinity + affinity.T) / 2


def normalised_laplacian(weights: np.ndarray) -> np.ndarray:
    """L = I - D^{-1/2} W D^{-1/2}, D = diag(row sums of W) (§3.2)."""
    scale = 1 / np.sqrt(weights.sum(axis=1))
    return np.eye(weights.shape[0]) - scale[:, None] * weights * scale[None, :]


def semantic_sets(entail: np.ndarray, contra: np.ndarray) -> int:
    """U_NumSet (§3.2): the number of connected components of the graph in which samples a and b
    are joined when each entails the other more than it contradicts it,
    E[a][b] > C[a][b] and E[b][a] > C[b][a]."""
    joined = (entail > contra) & (entail > contra).T
    labels = list(range(joined.shape[0]))

    def root(node: int) -> int:
        while labels[node] != node:
            node = labels[node]
        return node

    for a, b in zip(*np.nonzero(np.triu(joined, k=1)), strict=True):
        labels[root(int(b))] = root(int(a))
    return len({root(node) for node in labels})


def eigenvalue_sum(weights: np.ndarray) -> float:
    """U_EigV (§3.2): sum_k max(0, 1 - lambda_k) over the eigenvalues of the normalised Laplacian,
    a continuous count of the semantic sets."""
    return float(sum(max(0.0, 1.0 - value) for value in eigh(normalised_laplacian(weights), eigvals_only=True)))


def degree_uncertainty(weights: np.ndarray) -> float:
    """U_Deg (§3.2): trace(N I - D) / N^2 = sum_a (N - D[a][a]) / N^2, one minus the mean
    similarity of the samples (the diagonal included)."""
    n = weights.shape[0]
    return float(np.sum(n - weights.sum(axis=1)) / n**2)


def eccentricity(weights: np.ndarray, threshold: float) -> float:
    """U_Ecc (§3.2): the Frobenius norm of the samples' spectral embeddings, centred on their mean.
    The embedding of sample a is row a of the eigenvectors u_k of the normalised Laplacian whose
    eigenvalue is below ``threshold`` (lm-polygraph 0.7.0's choice of the smallest eigenvectors);
    U = sqrt(sum_k ||u_k - mean(u_k)||^2), the norm of the vector of per-eigenvector norms."""
    values, vectors = eigh(normalised_laplacian(weights))
    kept = vectors[:, values < threshold].T
    return float(np.linalg.norm(np.asarray([np.linalg.norm(u - u.mean(0), 2) for u in kept]), 2))
