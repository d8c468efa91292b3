"""Kernel Language Entropy (Nikitin et al., 2024, §3) step by step on hand-built NLI matrices whose
values follow from the definitions: the semantic graph, the two Laplacians, the heat and Matérn
kernels, the unit-trace density matrix and its von Neumann entropy; and the aggregate step's
reading of N, the kernels and the settings."""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np
import pytest
from scipy.linalg import expm

from hallulab.artifacts.nli_pair_matrix import PairMatrix
from hallulab.core.config import compose
from hallulab.data.schema import Record
from hallulab.methods.kernel_language_entropy.kernel import (
    DIAGONAL_GUARD,
    KernelChoice,
    density_matrix,
    graph_kernel,
    graph_laplacian,
    kernel_language_entropy,
    semantic_graph,
    von_neumann_entropy,
)
from hallulab.pipeline.context import AggregateContext
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.registry import method

NAME = "kernel_language_entropy"


def _pairs(entail: list[list[float]], contra: list[list[float]]) -> PairMatrix:
    e, c = np.asarray(entail), np.asarray(contra)
    return PairMatrix(e, 1 - e - c, c)


def test_the_graph_weighs_entailment_one_neutral_a_half_both_directions_summed() -> None:
    pairs = PairMatrix(
        np.array([[0.9, 0.6], [0.2, 0.9]]), np.array([[0.1, 0.3], [0.5, 0.1]]), np.array([[0.0, 0.1], [0.3, 0.0]])
    )
    # (0, 1): 0.6 + 0.3 / 2; (1, 0): 0.2 + 0.5 / 2; no self-loop
    np.testing.assert_allclose(semantic_graph(pairs, "probabilities"), [[0.0, 1.2], [1.2, 0.0]])
    # one-hot classes: 0 -> 1 entailment (1), 1 -> 0 neutral (1/2)
    np.testing.assert_array_equal(semantic_graph(pairs, "classes"), [[0.0, 1.5], [1.5, 0.0]])
    with pytest.raises(ValueError, match="weighting 'votes'"):
        semantic_graph(pairs, "votes")


def test_the_laplacians() -> None:
    weights = np.array([[0.0, 1.2, 0.4], [1.2, 0.0, 0.0], [0.4, 0.0, 0.0]])
    combinatorial = graph_laplacian(weights, "combinatorial")
    np.testing.assert_allclose(combinatorial, [[1.6, -1.2, -0.4], [-1.2, 1.2, 0.0], [-0.4, 0.0, 0.4]])
    np.testing.assert_allclose(combinatorial.sum(axis=1), 0.0, atol=1e-15)
    scale = np.diag(1 / np.sqrt([1.6, 1.2, 0.4]))
    np.testing.assert_allclose(graph_laplacian(weights, "normalised"), scale @ combinatorial @ scale)
    # a sample without any edge: a zero row and column, not a division by zero
    isolated = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(
        graph_laplacian(isolated, "normalised"), [[1.0, -1.0, 0.0], [-1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    )


def test_the_kernels_are_the_matrix_functions_of_the_laplacian() -> None:
    laplacian = graph_laplacian(np.array([[0.0, 1.2, 0.4], [1.2, 0.0, 0.7], [0.4, 0.7, 0.0]]), "combinatorial")
    for t in (0.3, 1.5):
        heat = graph_kernel(laplacian, KernelChoice(kernel="heat", t=t))
        np.testing.assert_allclose(heat, expm(-t * laplacian), rtol=1e-12, atol=1e-14)
    shifted = 2 * 1.0 / 0.5**2 * np.eye(3) + laplacian  # 2 nu / kappa^2 with kappa = 0.5, nu = 1
    matern = graph_kernel(laplacian, KernelChoice(kernel="matern", kappa=0.5, nu=1.0))
    np.testing.assert_allclose(matern, np.linalg.inv(shifted), rtol=1e-12)
    squared = graph_kernel(laplacian, KernelChoice(kernel="matern", kappa=2.0, nu=2.0))
    inverse = np.linalg.inv(2 * 2.0 / 2.0**2 * np.eye(3) + laplacian)
    np.testing.assert_allclose(squared, inverse @ inverse, rtol=1e-12)


def test_the_density_matrix_has_unit_diagonal_over_n() -> None:
    kernel = np.array([[4.0, 1.0], [1.0, 1.0]])
    root = np.array([2.0, 1.0]) + DIAGONAL_GUARD
    np.testing.assert_allclose(density_matrix(kernel), kernel / np.outer(root, root) / 2, rtol=1e-15)
    assert np.trace(density_matrix(kernel)) == pytest.approx(1.0, abs=1e-11)


def test_no_edges_is_n_meanings_and_scales_to_one() -> None:
    # every pair contradicts: W = 0, L = 0, K = I, rho = I / N, VNE = log N
    pairs = _pairs(
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
    )
    for kernel in ("heat", "matern"):
        assert kernel_language_entropy(pairs, KernelChoice(kernel=kernel)) == pytest.approx(1.0, abs=1e-10)
        unscaled = KernelChoice(kernel=kernel, scale=False)
        assert kernel_language_entropy(pairs, unscaled) == pytest.approx(math.log(3), abs=1e-10)


@pytest.mark.parametrize("t", [0.3, 1.0])
def test_a_complete_graph_has_the_closed_form_entropy(t: float) -> None:
    """Every ordered pair entails with probability e (no contradiction, the rest neutral): W = w
    off the diagonal, w = 2 (e + (1 - e) / 2); L = w (N I - 11^T) has eigenvalues 0 (once) and
    w N; K = P + exp(-t w N)(I - P), P = 11^T / N, whose diagonal is one value k; rho's
    eigenvalues are 1 / (N k) and exp(-t w N) / (N k) (N - 1 times)."""
    n, e = 4, 0.7
    entail = np.full((n, n), e)
    pairs = _pairs(entail.tolist(), np.zeros((n, n)).tolist())
    w = 2 * (e + (1 - e) / 2)
    decay = math.exp(-t * w * n)
    k = 1 / n + decay * (1 - 1 / n)
    mu = [1 / (n * k)] + [decay / (n * k)] * (n - 1)
    expected = -sum(m * math.log(m) for m in mu)
    choice = KernelChoice(t=t, scale=False)
    assert kernel_language_entropy(pairs, choice) == pytest.approx(expected, rel=1e-9)
    assert kernel_language_entropy(pairs, KernelChoice(t=t)) == pytest.approx(expected / math.log(n), rel=1e-9)


def test_agreeing_samples_score_lower_than_contradicting_ones() -> None:
    agree = _pairs(np.full((3, 3), 0.95).tolist(), np.full((3, 3), 0.01).tolist())
    split = _pairs(
        [[1.0, 0.95, 0.02], [0.95, 1.0, 0.02], [0.02, 0.02, 1.0]],
        [[0.0, 0.01, 0.9], [0.01, 0.0, 0.9], [0.9, 0.9, 0.0]],
    )
    for kernel in ("heat", "matern"):
        choice = KernelChoice(kernel=kernel)
        assert kernel_language_entropy(agree, choice) < kernel_language_entropy(split, choice)
    # the normalised Laplacian divides the degrees out: a complete graph's is the same at any weight
    low = _pairs(np.full((3, 3), 0.3).tolist(), np.full((3, 3), 0.01).tolist())
    normalised = KernelChoice(laplacian="normalised")
    assert kernel_language_entropy(agree, normalised) == pytest.approx(kernel_language_entropy(low, normalised))


def test_jitter_is_added_to_the_density_matrix_before_its_eigenvalues() -> None:
    rho = np.diag([0.5, 0.5, 0.0])
    assert von_neumann_entropy(rho) == pytest.approx(math.log(2))
    jittered = [0.51, 0.51, 0.01]
    assert von_neumann_entropy(rho, 0.01) == pytest.approx(-sum(m * math.log(m) for m in jittered))


def test_settings_outside_their_choices_are_refused() -> None:
    with pytest.raises(ValueError, match="kernel 'gauss'"):
        KernelChoice(kernel="gauss")
    with pytest.raises(ValueError, match="laplacian 'random_walk'"):
        KernelChoice(laplacian="random_walk")
    with pytest.raises(ValueError, match="two samples or more"):
        kernel_language_entropy(_pairs([[1.0]], [[0.0]]), KernelChoice())


def section(**overrides: Any) -> dict[str, Any]:
    """The method's settings as the default composition gives them, with ``overrides``."""
    return {**compose([])[NAME], **overrides}


def scores(
    records: list[Record], artifact: dict[str, Any], n: int | None = None, **overrides: Any
) -> dict[tuple[str, str], float]:
    spec = method(NAME)
    params = compose([] if n is None else [f"samples.used={n}"]) | {NAME: section(**overrides)}
    view = ParamsView(params, spec.aggregate.param_keys(), f"aggregate_{NAME}")
    step = importlib.import_module(f"hallulab.methods.{NAME}.aggregate").aggregate
    result = step(AggregateContext("t", records, {"nli_pair_matrix": artifact}, None, view))
    frame = result.scores
    assert set(frame["level"]) == {"response"}
    return {(r.variant, r.record_id): r.score for r in frame.itertuples()}


def test_the_aggregate_step_reads_the_chosen_samples_and_each_kernel() -> None:
    entail = [[1.0, 0.9, 0.0], [0.9, 1.0, 0.0], [0.0, 0.0, 1.0]]
    contra = [[0.0, 0.0, 0.9], [0.0, 0.0, 0.9], [0.9, 0.9, 0.0]]
    pairs = _pairs(entail, contra)
    records = [
        Record(id="r", response="x", sentences=("x",), samples=("a", "b", "c")),
        Record(id="one", response="x", sentences=("x",), samples=("y",)),
    ]
    artifact = {"records": {"r": pairs.to_dict()}}
    every = scores(records, artifact)
    assert set(every) == {("kle_heat", "r"), ("kle_matern", "r")}
    assert every[("kle_heat", "r")] == pytest.approx(kernel_language_entropy(pairs, KernelChoice()))
    matern = KernelChoice(kernel="matern")
    assert every[("kle_matern", "r")] == pytest.approx(kernel_language_entropy(pairs, matern))
    two = scores(records[:1], artifact, n=2, kernels="heat")
    assert list(two) == [("kle_heat", "r")]
    assert two[("kle_heat", "r")] == pytest.approx(kernel_language_entropy(pairs.chosen(np.arange(2)), KernelChoice()))
    assert two[("kle_heat", "r")] < every[("kle_heat", "r")]  # the contradicting third sample adds a meaning
    hotter = scores(records[:1], artifact, t=1.0, scale=False, weights="classes", laplacian="normalised")
    expected = KernelChoice(t=1.0, scale=False, weighting="classes", laplacian="normalised")
    assert hotter[("kle_heat", "r")] == pytest.approx(kernel_language_entropy(pairs, expected))
    assert hotter[("kle_heat", "r")] != pytest.approx(every[("kle_heat", "r")])


def test_a_record_whose_kernel_fails_is_named() -> None:
    pairs = _pairs([[1.0, 0.5], [0.5, 1.0]], [[0.0, 0.1], [0.1, 0.0]])
    broken = {**pairs.to_dict(), "entail": [[1.0, float("nan")], [0.5, 1.0]]}
    records = [Record(id="bad", response="x", sentences=("x",), samples=("a", "b"))]
    with pytest.raises(ValueError, match="record 'bad'"):
        scores(records, {"records": {"bad": broken}})
