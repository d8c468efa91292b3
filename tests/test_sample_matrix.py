"""The cheap half of the matrix variants: N, selection and aggregation over stored matrices."""

from __future__ import annotations

import numpy as np
import pytest

from hallulab.core.config import ConfigError, typed
from hallulab.core.units import record_scores, sentence_scores
from hallulab.methods.sample_matrix import aggregate, selected_columns
from hallulab.methods.sample_scores import SampleMatrices, SampleMatrixScores, sentence_sample_grid, unflatten
from hallulab.methods.sample_selection import SampleKnobs


def _stored() -> SampleMatrices:
    matrices = {"a": np.arange(12, dtype=float).reshape(3, 4) / 12, "b": np.array([[0.0, 1.0, 1.0, 1.0]])}
    return SampleMatrices("selfcheck_nli", "nli", {"model": "m"}, matrices, {"pairs": 16})


def test_mean_over_the_first_n_samples_and_passage_mean() -> None:
    frame, diagnostics = aggregate(_stored(), SampleKnobs(used=2))
    by_record = sentence_scores(frame, "nli")
    assert by_record["b"] == [0.5]
    np.testing.assert_allclose(by_record["a"], [0.5 / 12, 4.5 / 12, 8.5 / 12])
    assert record_scores(frame, "nli")["a"] == pytest.approx(4.5 / 12)
    assert diagnostics["pairs"] == 16


def test_random_selection_is_seeded_per_passage_and_n_is_checked() -> None:
    pick = SampleKnobs(used=2, selection="random", seed=7)
    first = selected_columns("a", 4, pick)
    assert len(first) == 2 and np.array_equal(first, selected_columns("a", 4, pick))
    with pytest.raises(ValueError, match=r"samples\.used: N=5 asked for, record 'a' stores 4 samples"):
        selected_columns("a", 4, SampleKnobs(used=5))
    with pytest.raises(ValueError, match=r"samples\.aggregation"):
        SampleKnobs(aggregation="mode")
    frame, _ = aggregate(_stored(), SampleKnobs(aggregation="max"))
    assert sentence_scores(frame, "nli")["b"] == [1.0]


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ({"used": -1}, "samples.used: must be >= 1, got -1"),
        ({"used": "abc"}, "samples.used: expected an integer, got 'abc'"),
        ({"used": 2.5}, "samples.used: expected an integer, got 2.5"),
        ({"selection": "last"}, "samples.selection: 'last' is not one of"),
    ],
)
def test_bad_sweep_knobs_name_the_setting(raw: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment.replace("[", r"\[")):
        typed(SampleKnobs, raw, "samples")


def test_round_trip_and_grid(toy_passages) -> None:
    stored = _stored()
    again = SampleMatrices.from_dict(stored.to_dict())
    np.testing.assert_array_equal(again.matrices["a"], stored.matrices["a"])
    sentences, samples = sentence_sample_grid(toy_passages, "test")
    assert len(sentences) == sum(len(p.sentences) * len(p.samples) for p in toy_passages)
    matrices = unflatten(toy_passages, np.arange(len(sentences), dtype=float))
    first = toy_passages[0]
    assert matrices[first.id].shape == (len(first.sentences), len(first.samples))
    assert sentences[len(first.samples)] == first.sentences[1] and samples[1] == first.samples[1]


def test_stored_scores_round_trip_and_a_file_of_another_shape_is_named() -> None:
    both = SampleMatrixScores((_stored(), SampleMatrices("selfcheck_prompt", "prompt_pno", {}, {"a": np.ones((1, 2))})))
    again = SampleMatrixScores.from_dict(both.to_dict(), "x.json")
    assert [s.variant for s in again.variants] == ["nli", "prompt_pno"]
    np.testing.assert_array_equal(again.variants[0].matrices["a"], _stored().matrices["a"])
    # one matrix set without the variants list: the shape score stages wrote before the typed contract
    with pytest.raises(
        ValueError, match=r"data/scores/toy/selfcheck_nli.json: not the stored scores of SampleMatrixScores"
    ):
        SampleMatrixScores.from_dict(_stored().to_dict(), "data/scores/toy/selfcheck_nli.json")
