"""The graph-based uncertainty measures of Lin, Trivedi and Sun (2023, §3) on hand-built
similarity graphs whose values follow from the paper's definitions, and the aggregate steps'
reading of N, the choice of samples and the similarities."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from hallulab.artifacts.nli_pair_matrix import PairMatrix
from hallulab.core.config import compose
from hallulab.data.schema import Record
from hallulab.methods.similarity_graph import (
    degree_uncertainty,
    eccentricity,
    eigenvalue_sum,
    jaccard_matrix,
    semantic_sets,
    similarity_matrix,
)
from hallulab.pipeline.context import AggregateContext
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.registry import method


def _blocks(*sizes: int) -> np.ndarray:
    """The weights of disjoint cliques (self-loops included) of the given sizes."""
    n = sum(sizes)
    weights = np.zeros((n, n))
    at = 0
    for size in sizes:
        weights[at : at + size, at : at + size] = 1.0
        at += size
    return weights


@pytest.mark.parametrize("sizes", [(4,), (2, 2), (1, 1, 1), (3, 1, 2)])
def test_the_eigenvalue_sum_counts_the_cliques(sizes: tuple[int, ...]) -> None:
    # each clique's normalised Laplacian has one zero eigenvalue, the others 1: sum max(0, 1 - l) = k
    assert eigenvalue_sum(_blocks(*sizes)) == pytest.approx(len(sizes), abs=1e-12)


def test_the_degree_measure_is_one_minus_the_mean_similarity() -> None:
    assert degree_uncertainty(_blocks(4)) == 0.0
    assert degree_uncertainty(np.eye(4)) == pytest.approx(3 / 4)
    weights = np.array([[1.0, 0.5, 0.2], [0.5, 1.0, 0.0], [0.2, 0.0, 1.0]])
    assert degree_uncertainty(weights) == pytest.approx(1 - weights.sum() / 9)


def test_eccentricity_is_the_norm_of_the_centred_spectral_embeddings() -> None:
    # one clique: the only kept eigenvector is constant, centred to zero
    assert eccentricity(_blocks(4), 0.9) == pytest.approx(0.0, abs=1e-12)
    # no edge: every eigenvalue 0, every eigenvector kept; ||(I - 11^T/N) U||_F^2 = N - 1
    assert eccentricity(np.eye(5), 0.9) == pytest.approx(math.sqrt(4))
    # two cliques of two: the kept eigenvectors span the two indicators, 2 - ||U^T 1||^2 / N = 1
    assert eccentricity(_blocks(2, 2), 0.9) == pytest.approx(1.0)
    # a threshold below every non-zero eigenvalue keeps the null space only
    weights = np.array([[1.0, 0.6, 0.1], [0.6, 1.0, 0.3], [0.1, 0.3, 1.0]])
    # the null space of L is spanned by D^{1/2} 1
    null = np.sqrt(weights.sum(axis=1)) / np.linalg.norm(np.sqrt(weights.sum(axis=1)))
    assert eccentricity(weights, 1e-9) == pytest.approx(np.linalg.norm(null - null.mean()))
    assert eccentricity(weights, 1.9) > eccentricity(weights, 1e-9)


def test_semantic_sets_join_samples_that_entail_each_other_more_than_they_contradict() -> None:
    entail = np.array(
        [
            [1.0, 0.8, 0.1, 0.7],
            [0.9, 1.0, 0.1, 0.2],
            [0.1, 0.1, 1.0, 0.1],
            [0.7, 0.1, 0.1, 1.0],
        ]
    )
    contra = np.full((4, 4), 0.3)
    # 0-1 and 0-3 both ways; 1-3 only one way but joined through 0; 2 alone
    assert semantic_sets(entail, contra) == 2
    entail[3, 0] = 0.2  # 0 -> 3 only: 3 is a set of its own
    assert semantic_sets(entail, contra) == 3
    assert semantic_sets(np.eye(3), np.full((3, 3), 0.5)) == 3


def test_the_similarities_are_symmetrised_and_jaccard_reads_lower_case_word_sets() -> None:
    entail = np.array([[0.9, 0.8], [0.2, 0.9]])
    contra = np.array([[0.0, 0.1], [0.5, 0.0]])
    pairs = PairMatrix(entail, 1 - entail - contra, contra)
    np.testing.assert_allclose(similarity_matrix(pairs, ("a", "b"), "entail"), [[0.9, 0.5], [0.5, 0.9]])
    np.testing.assert_allclose(similarity_matrix(pairs, ("a", "b"), "contra"), [[1.0, 0.7], [0.7, 1.0]])
    texts = ("Born in Warsaw", "born in Paris", "")
    np.testing.assert_allclose(jaccard_matrix(texts), [[1.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_array_equal(similarity_matrix(pairs, texts, "jaccard"), jaccard_matrix(texts))


def _aggregate(name: str, overrides: list[str], records: list[Record], artifact: dict) -> dict[tuple[str, str], float]:
    spec = method(name)
    view = ParamsView(compose(overrides), spec.aggregate.param_keys(), f"aggregate_{name}")
    step = importlib.import_module(f"hallulab.methods.{name}.aggregate").aggregate
    result = step(AggregateContext("t", records, {"nli_pair_matrix": artifact}, None, view))
    frame = result.scores
    assert set(frame["level"]) == {"response"}
    return {(r.variant, r.record_id): r.score for r in frame.itertuples()}


def test_the_aggregate_steps_read_the_chosen_samples_sub_matrix() -> None:
    """N = 2 reads the first two samples' 2 x 2 block, so a clique of the first two scores as one
    set whatever the third sample says; a record without a pair matrix is not scored."""
    entail = np.array([[1.0, 0.9, 0.0], [0.9, 1.0, 0.0], [0.0, 0.0, 1.0]])
    contra = np.array([[0.0, 0.0, 0.9], [0.0, 0.0, 0.9], [0.9, 0.9, 0.0]])
    pairs = PairMatrix(entail, 1 - entail - contra, contra)
    samples = ("Warsaw in 1867", "Warsaw in 1867", "Vienna")
    records = [
        Record(id="r", response="x", sentences=("x",), samples=samples),
        Record(id="one", response="x", sentences=("x",), samples=("y",)),
    ]
    artifact = {"records": {"r": pairs.to_dict()}}
    assert _aggregate("num_sem_sets", [], records, artifact) == {("num_sem_sets", "r"): 2.0}
    assert _aggregate("num_sem_sets", ["samples.used=2"], records[:1], artifact) == {("num_sem_sets", "r"): 1.0}
    two = _aggregate("eig_val_laplacian", ["samples.used=2"], records[:1], artifact)
    assert two[("eigv_jaccard", "r")] == pytest.approx(1.0)
    # W = [[1, .9], [.9, 1]]: L's eigenvalues 0 and 1.8 / 1.9
    assert two[("eigv_entail", "r")] == pytest.approx(1 + 0.1 / 1.9)
    every = _aggregate("eig_val_laplacian", [], records[:1], artifact)
    assert every[("eigv_entail", "r")] == pytest.approx(eigenvalue_sum(similarity_matrix(pairs, samples, "entail")))
    assert every[("eigv_contra", "r")] > two[("eigv_contra", "r")]
    degrees = _aggregate("deg_mat", ["deg_mat.similarities=entail"], records[:1], artifact)
    assert list(degrees) == [("degmat_entail", "r")]
    assert degrees[("degmat_entail", "r")] == pytest.approx(1 - entail.sum() / 9)
    ecc = _aggregate("eccentricity", ["eccentricity.threshold=1e-9"], records[:1], artifact)
    assert {variant for variant, _ in ecc} == {"ecc_entail", "ecc_contra", "ecc_jaccard"}
