"""LUQ (Zhang et al., 2024) on hand-built NLI outputs: the support score S = exp(z_e) / (exp(z_e) +
exp(z_c)) and its reading from probabilities, the samples' reading lm-polygraph ships, the
sentence reading (the sample the premise) and its relation to SelfCheckGPT-NLI, and the aggregate
step's reading of N, the readings and the stored matrices."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

from hallulab.artifacts.nli_pair_matrix import PairMatrix
from hallulab.core.config import compose
from hallulab.core.errors import StaleScoresError
from hallulab.data.schema import Record
from hallulab.methods.luq.formula import samples_uncertainty, support
from hallulab.methods.luq.score import sentence_matrices
from hallulab.methods.sample_scores import SampleMatrices, SampleMatrixScores
from hallulab.methods.selfcheck_nli.score import record_matrices
from hallulab.nli.scorer import NLIKnobs, NLIScorer
from hallulab.pipeline.context import AggregateContext
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.registry import method

NAME = "luq"


def test_the_support_from_probabilities_is_the_two_logit_softmax() -> None:
    logits = np.random.default_rng(0).normal(scale=3.0, size=(50, 3))  # entailment, neutral, contradiction
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    expected = np.exp(logits[:, 0]) / (np.exp(logits[:, 0]) + np.exp(logits[:, 2]))
    np.testing.assert_allclose(support(probs[:, 0], probs[:, 2]), expected, rtol=1e-13)
    with pytest.raises(ValueError, match="both 0"):
        support(np.array([0.0, 0.5]), np.array([0.0, 0.5]))


def test_the_samples_reading_is_one_minus_the_mean_off_diagonal_support() -> None:
    entail = np.array([[0.9, 0.6, 0.1], [0.3, 0.9, 0.2], [0.0, 0.4, 0.9]])
    contra = np.array([[0.0, 0.2, 0.3], [0.1, 0.0, 0.6], [0.5, 0.4, 0.0]])
    s = entail / (entail + contra)
    off = [s[a, b] for a in range(3) for b in range(3) if a != b]
    assert samples_uncertainty(entail, contra) == pytest.approx(1 - np.mean(off), abs=1e-15)
    # the diagonal (a sample read against itself) does not count
    changed = entail.copy()
    np.fill_diagonal(changed, 0.01)
    assert samples_uncertainty(changed, contra) == pytest.approx(samples_uncertainty(entail, contra), abs=1e-15)
    with pytest.raises(ValueError, match="two samples or more"):
        samples_uncertainty(entail[:1, :1], contra[:1, :1])


def _contradiction(premises: list[str], hypotheses: list[str]) -> np.ndarray:
    """An asymmetric stand-in for P(contradict): the share of the hypothesis's words the premise lacks."""
    out = []
    for premise, hypothesis in zip(premises, hypotheses, strict=True):
        p, h = set(premise.lower().split()), set(hypothesis.lower().split())
        out.append(0.05 + 0.9 * len(h - p) / max(len(h), 1))
    return np.asarray(out)


PASSAGES = [
    Record(
        id="curie",
        response="Curie was born in Warsaw. She won two Nobel prizes.",
        sentences=("Curie was born in Warsaw.", "She won two Nobel prizes."),
        samples=(
            "Curie was born in Warsaw in 1867 and won two Nobel prizes.",
            "Curie was born in Paris.",
            "Born in Warsaw, she won the Nobel prize twice.",
        ),
    ),
    Record(
        id="tesla",
        response="Tesla was born in Smiljan.",
        sentences=("Tesla was born in Smiljan.",),
        samples=("Tesla was born in Smiljan, Croatia.", "He was born in Vienna in 1856.", "Tesla."),
    ),
]


def test_the_sentence_matrix_reads_each_sentence_against_each_sample_the_sample_the_premise() -> None:
    seen: list[tuple[str, str]] = []

    def recording(premises: list[str], hypotheses: list[str]) -> np.ndarray:
        seen.extend(zip(premises, hypotheses, strict=True))
        return _contradiction(premises, hypotheses)

    matrices = sentence_matrices(PASSAGES, recording)
    curie = PASSAGES[0]
    assert seen[:3] == [(sample, curie.sentences[0]) for sample in curie.samples]
    assert matrices["curie"].shape == (2, 3) and matrices["tesla"].shape == (1, 3)
    assert matrices["curie"][1, 0] == _contradiction([curie.samples[0]], [curie.sentences[1]])[0]


@pytest.mark.parametrize("pair_order", ["sample_first", "sentence_first"])
def test_the_sentence_reading_is_selfcheck_nli_with_the_sample_first(
    pair_order: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same P(contradict) with the sample the premise: equal to SelfCheckGPT-NLI's matrix when
    its pair order is sample_first, not when it is sentence_first (its released code's)."""
    scorer = NLIScorer(NLIKnobs(model="stand-in", pair_order=pair_order))
    monkeypatch.setattr(
        scorer, "contradiction_probs", lambda texts, pairs, progress=False: _contradiction(texts, pairs)
    )
    selfcheck = record_matrices(PASSAGES, scorer)
    ours = sentence_matrices(PASSAGES, _contradiction)
    same = all(np.array_equal(ours[p.id], selfcheck[p.id]) for p in PASSAGES)
    assert same == (pair_order == "sample_first")


def section(**overrides: Any) -> dict[str, Any]:
    """The method's settings as the default composition gives them, with ``overrides``."""
    return {**compose([])[NAME], **overrides}


def _pair_matrix(record: Record) -> PairMatrix:
    premises = [a for a in record.samples for _ in record.samples]
    hypotheses = [b for _ in record.samples for b in record.samples]
    contra = _contradiction(premises, hypotheses).reshape(len(record.samples), -1)
    entail = (1 - contra) * 0.8  # a fifth of the rest neutral
    return PairMatrix(entail, 1 - entail - contra, contra)


def _run(records: list[Record], raw: SampleMatrixScores, n: int | None = None, **overrides: Any) -> Any:
    spec = method(NAME)
    params = compose([] if n is None else [f"samples.used={n}"]) | {NAME: section(**overrides)}
    view = ParamsView(params, spec.aggregate.param_keys(), f"aggregate_{NAME}")
    artifact = {"records": {p.id: _pair_matrix(p).to_dict() for p in records if len(p.samples) >= 2}}
    step = importlib.import_module(f"hallulab.methods.{NAME}.aggregate").aggregate
    return step(AggregateContext("t", records, {"nli_pair_matrix": artifact}, raw, view))


def _stored(records: list[Record]) -> SampleMatrixScores:
    matrices = sentence_matrices(records, _contradiction)
    return SampleMatrixScores((SampleMatrices("luq", "luq_sentence", {}, matrices),))


def test_the_aggregate_step_writes_both_readings_over_the_chosen_samples() -> None:
    one_sample = Record(id="one", response="x y.", sentences=("x y.",), samples=("x",))
    records = [*PASSAGES, one_sample]
    result = _run(records, _stored(records))
    frame = result.scores
    sentence = frame[(frame["variant"] == "luq_sentence") & (frame["level"] == "sentence")]
    matrix = sentence_matrices(PASSAGES[:1], _contradiction)["curie"]
    # u_i = 1 - mean_n S(s_i, r_n) = mean_n (1 - S)
    np.testing.assert_allclose(sentence[sentence["record_id"] == "curie"]["score"], 1 - (1 - matrix).mean(axis=1))
    response = frame[frame["level"] == "response"].set_index(["variant", "record_id"])["score"]
    assert response[("luq_sentence", "curie")] == pytest.approx(np.mean(1 - (1 - matrix).mean(axis=1)))
    pairs = _pair_matrix(PASSAGES[0])
    assert response[("luq_response", "curie")] == pytest.approx(samples_uncertainty(pairs.entail, pairs.contra))
    # one sample: a sentence reading, no pair of samples to compare
    assert ("luq_sentence", "one") in response and ("luq_response", "one") not in response
    assert result.diagnostics["response"]["records_without_pair_matrix"] == 1

    two = _run(PASSAGES, _stored(PASSAGES), n=2).scores
    two_sentence = two[
        (two["variant"] == "luq_sentence") & (two["record_id"] == "curie") & (two["level"] == "sentence")
    ]
    np.testing.assert_allclose(two_sentence["score"], matrix[:, :2].mean(axis=1))
    two_response = two[(two["variant"] == "luq_response") & (two["record_id"] == "curie")]["score"].item()
    chosen = pairs.chosen(np.arange(2))
    assert two_response == pytest.approx(samples_uncertainty(chosen.entail, chosen.contra))


def test_the_readings_setting_keeps_one_reading() -> None:
    only_sentence = _run(PASSAGES, _stored(PASSAGES), readings=["sentence"]).scores
    assert set(only_sentence["variant"]) == {"luq_sentence"}
    only_response = _run(PASSAGES, _stored(PASSAGES), readings="response").scores
    assert set(only_response["variant"]) == {"luq_response"} and set(only_response["level"]) == {"response"}


def test_stored_scores_without_the_sentence_matrices_are_stale() -> None:
    other = SampleMatrixScores((SampleMatrices("luq", "something_else", {}, {}),))
    with pytest.raises(StaleScoresError, match="no 'luq_sentence' matrices"):
        _run(PASSAGES, other)
