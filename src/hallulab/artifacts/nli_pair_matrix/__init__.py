"""NLI class probabilities of every ordered pair of a record's samples (shared artifact), the
input of the graph-based uncertainty estimators of Lin, Trivedi and Sun (2023), "Generating with
Confidence: Uncertainty Quantification for Black-box Large Language Models", §3 (lm-polygraph
0.7.0's ``SemanticMatrixCalculator`` computes the same matrices for its ``NumSemSets``,
``EigValLaplacian``, ``DegMat`` and ``Eccentricity``).

For a record with N >= 2 samples s_1..s_N, ``entail[a][b]``, ``neutral[a][b]`` and
``contra[a][b]`` are the configured NLI model's softmax probabilities of entailment, neutral and
contradiction with premise s_a and hypothesis s_b, for every ordered pair, the diagonal (a sample
read against itself) included: lm-polygraph's matrices hold it and the degree and the Laplacian
of the similarity graph read it. The NLI model reads each sample alone, the texts of Semantic
Entropy's default ``nli_input: answer``, and the call cache keeps one entry per (premise,
hypothesis, model): the pairs Semantic Entropy's classes read (the few it scores) are found there
after its score step, and Semantic Entropy finds there every pair this artifact scored, so a run
of these methods and Semantic Entropy pays for each pair once. Every pair of the data set goes to
the NLI scorer in one batched, cached request, whichever of the four methods read it; N and the
choice of samples are the methods' cheap knobs (a chosen subset's matrix is the sub-matrix at its
indices).

Stored JSON: ``{"nli", "records": {record: {"entail", "neutral", "contra"}}, "diagnostics"}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hallulab.pipeline.spec import ArtifactSpec, StepInputs, unplanned


@dataclass(frozen=True)
class PairMatrix:
    """One record's N x N NLI probabilities, premise a (row) and hypothesis b (column)."""

    entail: np.ndarray
    neutral: np.ndarray
    contra: np.ndarray

    @property
    def size(self) -> int:
        return int(self.entail.shape[0])

    def chosen(self, columns: np.ndarray) -> PairMatrix:
        """The matrices of the samples at ``columns``, in that order."""
        grid = np.ix_(columns, columns)
        return PairMatrix(self.entail[grid], self.neutral[grid], self.contra[grid])

    def to_dict(self) -> dict[str, Any]:
        return {"entail": self.entail.tolist(), "neutral": self.neutral.tolist(), "contra": self.contra.tolist()}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> PairMatrix:
        def square(key: str) -> np.ndarray:
            matrix = np.asarray(raw[key], dtype=np.float64)
            if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
                raise ValueError(f"nli_pair_matrix: {key} is not a square matrix (shape {matrix.shape})")
            return matrix

        return cls(square("entail"), square("neutral"), square("contra"))


def pair_matrices(raw: Mapping[str, Any]) -> dict[str, PairMatrix]:
    """record id -> its :class:`PairMatrix`, from the stored artifact."""
    return {rid: PairMatrix.from_dict(record) for rid, record in raw["records"].items()}


SPEC = ArtifactSpec(
    name="nli_pair_matrix",
    description="NLI class probabilities of every ordered pair of each record's samples",
    inputs=StepInputs(params=("nli",), files=("${nli.depends_on}",)),
    calls=unplanned("its N x N NLI pairs per record (the samples read against each other) are not counted yet"),
    shards=True,
)
