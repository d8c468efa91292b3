"""Self-Familiarity's inputs read as the released code (soap117/Self-evaluation,
``run_exp_self_familiarity.py`` and ``myutils.py``) computes them: the explanation length, the
prompt length P of the total normalisation, which hypothesis gives s_i, the masking, and the
smaller differences (EOS in the length, the word rank, the threshold's bootstrap, the search's
length limit). Each test here failed on the code before this reading became the headline."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hallulab.artifacts.concepts.processing import WordRanks, log_frequency
from hallulab.llm.base import ConstrainedParams, ConstrainedResult, DecodingParams, Generation, Prompt
from hallulab.llm.constrained_beam import constrained_beam_search
from hallulab.methods.self_familiarity import masking
from hallulab.methods.self_familiarity.aggregate import concept_familiarity
from hallulab.methods.self_familiarity.knobs import SelfFamiliarityScoreKnobs, ThresholdKnobs
from hallulab.methods.self_familiarity.threshold import basic_threshold
from tests.conftest import REPO

PAGE = REPO / "docs/papers/self-familiarity.md"


def _inference_messages(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": f'"{text}" is related to what?'}]


# ---------------------------------------------------------------- 1. the explanation length
def test_the_explanation_is_generated_with_the_released_100_new_tokens() -> None:
    """The released code explains a concept with its helper's default length, 100 new tokens
    (Appendix D says l_F = 200); the paper profile, the one the published command uses, too."""
    from hallulab.core.config import compose

    assert SelfFamiliarityScoreKnobs().explanation_tokens == 100
    params = compose(overrides=["dataset=concept7"])
    assert params["profile"]["name"] == "paper"
    assert params["self_familiarity"]["score"]["explanation_tokens"] == 100


def test_the_page_says_where_the_paper_and_its_code_differ() -> None:
    page = PAGE.read_text(encoding="utf-8")
    for named in (
        "l_F = 200",  # item 1: Appendix D's explanation length, beside the released 100
        "100 new tokens",
        "BOS",  # item 2: P counted on the released wrapper
        "system prompt",
        "adjacent",  # item 5: the grouping that is named, not followed
        "BCa",  # item 5: the threshold's bootstrap as released
        "percentile bootstrap",
        "constraint string",  # item 5: the search's length limit
        "`selffam_inputnorm`",  # the project's P, a labelled row
    ):
        assert named in page, named


# ---------------------------------------------------------------- 2. P on the released wrapper
def test_p_is_counted_on_the_released_wrapper_with_the_masking_over_it() -> None:
    """A chat-template model is given its own rendering of the masked instruction; P is counted
    on BOS + ``USER: … ASSISTANT:`` as the released code wraps and masks it."""
    from hallulab.methods.self_familiarity.inference import RELEASED_WRAPPER, inference_input

    explanation = "Vitamin A is a nutrient.\nIt helps sight."
    found = inference_input(explanation, "Vitamin A", _inference_messages, masking="released", prompt_format=None)
    instruction = '"... is ... nutrient.\nIt helps sight." is rel...ted to wh...t?'
    assert found.length_text == f"USER: {instruction} ...SSIST...NT:"  # newlines kept, the wrapper masked too
    assert found.as_is is False
    assert found.prompt == [{"role": "user", "content": instruction}]
    # a model that is given the released wrapper itself (Vicuna's prompt_format) reads it as is
    vicuna = inference_input(
        explanation, "Vitamin A", _inference_messages, masking="released", prompt_format=RELEASED_WRAPPER
    )
    assert vicuna.as_is is True and vicuna.prompt == vicuna.length_text == found.length_text


def test_the_hf_backend_counts_p_on_the_length_text_with_bos_and_vicuna_gets_its_bos() -> None:
    from hallulab.core.config import compose
    from hallulab.llm import build_llm
    from hallulab.llm.hf import HFLLM

    class Tokenizer:
        bos_token_id = 1
        eos_token_id = 2
        unk_token_id = 0

        def __call__(self, text: str, add_special_tokens: bool = True) -> dict[str, list[int]]:
            return {"input_ids": [10 + len(word) for word in text.split()]}

    vicuna = compose()["llm_catalogue"]["vicuna_13b_hf"]
    assert vicuna["bos"] is True  # every call: generation, teacher forcing, constrained search
    llm = build_llm({**vicuna, "num_threads": None})
    assert isinstance(llm, HFLLM)
    llm.__dict__["_loaded"] = (None, Tokenizer())
    assert llm.prompt_ids("USER: hi ASSISTANT:") == [1, 15, 12, 20]
    assert llm.length_of("USER: hi ASSISTANT:") == 4  # BOS + the wrapper's tokens
    smol = build_llm({**compose()["llm_catalogue"]["smollm2"], "num_threads": None})
    assert isinstance(smol, HFLLM)
    smol.__dict__["_loaded"] = (None, Tokenizer())
    assert smol.prompt_ids("USER: hi ASSISTANT:") == [15, 12, 20]  # no BOS of its own: the template has one
    assert smol.length_of("USER: hi ASSISTANT:") == 4  # P counts BOS as the released wrapper built it


@pytest.mark.model
def test_the_search_on_smollm2_counts_p_on_the_released_wrapper_and_ranks_by_it() -> None:
    from hallulab.core.config import compose
    from hallulab.llm import build_llm
    from hallulab.llm.hf import HFLLM

    llm = build_llm({**compose()["llm_catalogue"]["smollm2"], "num_threads": 1})
    assert isinstance(llm, HFLLM)
    content = '"... is the process by which green plants turn light into chemical energy." is related to what?'
    chat = [{"role": "user", "content": content}]
    wrapped = f"USER: {content} ASSISTANT:"
    params = ConstrainedParams(4, 6, normalise="total")
    (result,) = llm.constrained_search([chat], [masking.constraint_strings("photosynthesis")], params, [wrapped])
    assert result.prompt_tokens == 1 + len(llm.tokenizer(wrapped, add_special_tokens=False)["input_ids"])
    assert result.input_tokens == len(llm.prompt_ids(llm.render(chat))) > result.prompt_tokens + 20  # its system prompt
    assert result.hypotheses
    scores = [h["logprob"] / (h["length"] + result.prompt_tokens) for h in result.hypotheses]
    assert scores == sorted(scores, reverse=True)


# ---------------------------------------------------------------- 3. s_i: the best by the total score
class _Bigram:
    def __init__(self, seed: int, vocab: int = 5) -> None:
        rng = np.random.default_rng(seed)
        self.table = np.log(rng.dirichlet(np.full(vocab, 0.4), size=vocab))
        self.first = np.log(rng.dirichlet(np.full(vocab, 0.4)))
        self.rows: list[tuple[int, ...]] = []

    def logprobs(self, tokens: tuple[int, ...]) -> np.ndarray:
        return self.first if not tokens else self.table[tokens[-1]]

    def start(self) -> np.ndarray:
        self.rows = [()]
        return self.first[None, :]

    def advance(self, parents: Sequence[int], tokens: Sequence[int]) -> np.ndarray:
        self.rows = [(*self.rows[p], t) for p, t in zip(parents, tokens, strict=True)]
        return np.stack([self.logprobs(r) for r in self.rows])


@pytest.mark.parametrize("seed", range(6))
def test_the_search_returns_the_best_hypothesis_by_the_total_normalised_score_first(seed: int) -> None:
    """transformers' beam scorer (< 4.36) ranks finished hypotheses by sum / (P + length) and
    ``num_return_sequences=1`` returns the best: with a prompt length the search ranks so."""
    model = _Bigram(seed)
    found = constrained_beam_search(model, [(2, 1)], beam_size=400, max_new_tokens=5, eos_ids=[4], prompt_length=40)
    totals = [h.logprob / (h.length + 40) for h in found]
    assert totals == sorted(totals, reverse=True)
    best_answer = max(h.logprob / h.length for h in found)
    assert found[0].logprob / found[0].length <= best_answer  # the answer-only best may differ


def test_s_i_is_the_best_returned_hypothesis_and_all_of_them_are_stored(tmp_path: Path) -> None:
    hypotheses = [
        {"text": "a Pepsi", "logprob": -1.0, "length": 2, "ended": "eos"},
        *({"text": f"long Pepsi {i}", "logprob": -3.0 - i, "length": 12, "ended": "length"} for i in range(5)),
    ]
    raw = _score_with_fake_llm(hypotheses)
    entry = raw.concepts["Pepsi"]
    assert len(entry["hypotheses"]) == 6  # every returned hypothesis, not the first three
    p = entry["prompt_tokens"]
    assert concept_familiarity(entry, "total") == pytest.approx(math.exp(-1.0 / (2 + p)))
    assert concept_familiarity(entry, "answer") == pytest.approx(math.exp(-3.0 / 12))


# ---------------------------------------------------------------- 4. masking as released
def test_the_released_stop_word_list_is_empty_so_every_word_of_the_concept_is_masked() -> None:
    """The released code filters the concept's words with its stop-token list (only "</s>") by
    then, so "of" and "the" of "Law of the Sea" are masked too, wherever they occur."""
    assert masking.released_targets("Law of the Sea") == ["Law", "of", "the", "Sea", "Law of the Sea"]
    masked, spans = masking.mask_released("The Law of the Sea is a treaty of the sea; theory.", "Law of the Sea")
    assert masked == "... ... is a treaty ... ... ...; ...ory."
    assert spans == 6  # the concept, "The", "sea", "the" twice (once in "theory"), "of"
    assert masking.released_targets("Newton's cradle") == ["Newton", "'s", "cradle", "Newton's cradle"]  # word_tokenize


def test_the_released_explanation_keeps_its_newlines() -> None:
    assert masking.released_explanation("First line.\n\nSecond line.\n") == "First line.\n\nSecond line."
    assert masking.released_explanation("An answer. User ") == "An answer. "
    assert masking.released_explanation("") == ""


def test_the_score_step_masks_the_whole_instruction_as_released(tmp_path: Path) -> None:
    hypotheses = [{"text": "Catch a Fire", "logprob": -2.0, "length": 3, "ended": "eos"}]
    llm = _FakeLLM(hypotheses, explanation="It is an album.\nBy a band.")
    _score_with_fake_llm(hypotheses, llm=llm, concept="Catch a Fire")
    (prompt,) = llm.searched
    assert prompt == [{"role": "user", "content": '"It is ...n ...lbum.\nBy ... b...nd." is rel...ted to wh...t?'}]
    (length_text,) = llm.length_texts
    assert length_text == 'USER: "It is ...n ...lbum.\nBy ... b...nd." is rel...ted to wh...t? ...SSIST...NT:'


# ---------------------------------------------------------------- 5. the smaller differences
def test_an_eos_ending_hypothesis_counts_its_tokens_without_the_eos() -> None:
    """transformers' beam scorer (< 4.36) stored the sequence before the EOS token: its score,
    the EOS token's log-probability included, divided by that sequence's length."""
    model = _Bigram(1)
    model.table[:, 4] = np.log(0.6)  # EOS likely after any token
    found = constrained_beam_search(model, [(2,)], beam_size=6, max_new_tokens=4, eos_ids=[4])
    ended = [h for h in found if h.ended == "eos"]
    assert ended
    for hyp in ended:
        assert hyp.length == len(hyp.tokens)
        expected = sum(model.logprobs(hyp.tokens[:i])[t] for i, t in enumerate(hyp.tokens))
        assert hyp.logprob == pytest.approx(expected + model.logprobs(hyp.tokens)[4])


def test_word_ranks_are_the_released_ones_one_based_and_the_last_listing_wins() -> None:
    """The released rarity table is filled in list order with 1-based positions, so a word
    listed twice keeps its later position; an unlisted or capitalised word takes the number of
    distinct words."""
    ranks = WordRanks.from_words(["the", "of", "year", "the", "ink"])
    assert ranks.rank("of") == 2 and ranks.rank("the") == 4 and ranks.rank("ink") == 5
    assert ranks.rank("zyzzyva") == 4 and ranks.rank("Year") == 4
    assert math.exp(log_frequency(("ink", "of"), ranks, 100.0)) == pytest.approx(
        math.exp(-5 / 100) * math.exp(-2 / 100)
    )
    assert ranks.common_rank("the") == 0 and ranks.common_rank("year") == 2  # the common filter: first listing
    assert ranks.words("debt-ceiling crisis") == ("debt-ceiling", "crisis")  # split at spaces
    earlier = WordRanks.from_words(["the", "of", "year", "the", "ink"], "first_listing")
    assert earlier.rank("the") == 0 and earlier.rank("zyzzyva") == 5


def test_the_threshold_is_the_midpoint_of_scipys_bca_interval_of_the_fifth_percentile() -> None:
    from scipy.stats import bootstrap

    rng = np.random.default_rng(3)
    familiarity = rng.uniform(0.2, 0.9, size=60)
    cfg = ThresholdKnobs()
    assert cfg.method == "bca" and cfg.bootstrap_samples == 9999
    found = basic_threshold(1.0 - familiarity, cfg)
    res = bootstrap(
        (-(1.0 - familiarity),),
        lambda x, axis: np.percentile(x, 5, axis=axis),
        n_resamples=9999,
        confidence_level=0.95,
        method="BCa",
        rng=np.random.default_rng(cfg.seed),
    )
    low, high = res.confidence_interval
    assert found.value == pytest.approx(-(low + high) / 2, abs=1e-12) and found.method == "bca"
    percentile = basic_threshold(1.0 - familiarity, ThresholdKnobs(method="percentile", bootstrap_samples=1000))
    assert percentile.method == "percentile" and percentile.value != pytest.approx(found.value, abs=1e-9)
    constant = basic_threshold([0.3] * 5, cfg)  # BCa is undefined on constant data: the percentile interval
    assert constant.value == pytest.approx(0.3) and constant.method == "percentile"


def test_the_search_may_write_l_b_tokens_plus_one_per_constraint_string() -> None:
    """The released code caps the sequence at prompt + number of constraint strings + l_B."""
    from hallulab.llm.hf import search_budget

    strings = ["Pepsi", "pepsi", "PEPSI", " Pepsi", " pepsi", " PEPSI"]
    assert search_budget(ConstrainedParams(beam_size=30, max_new_tokens=15), strings) == 21


# ---------------------------------------------------------------- a score step over a fake model
class _FakeLLM:
    """Greedy explanations of a fixed text; constrained search returning fixed hypotheses."""

    def __init__(self, hypotheses: list[dict[str, Any]], explanation: str = "It is a soda.") -> None:
        from hallulab.llm.base import Capabilities

        self.capabilities = Capabilities(constrained_search=True)
        self.hypotheses = hypotheses
        self.explanation = explanation
        self.generated: list[DecodingParams] = []
        self.searched: list[Prompt] = []
        self.length_texts: list[str] = []
        self.params: list[ConstrainedParams] = []

    def generate(self, prompts: Sequence[Prompt], params: DecodingParams, seeds: Any = None) -> list[Generation]:
        self.generated.append(params)
        return [Generation(self.explanation) for _ in prompts]

    def constrained_search(
        self,
        prompts: Sequence[Prompt],
        constraints: Sequence[Sequence[str]],
        params: ConstrainedParams,
        length_texts: Sequence[str] | None = None,
    ) -> list[ConstrainedResult]:
        self.searched.extend(prompts)
        self.length_texts.extend(length_texts or [])
        self.params.append(params)
        return [ConstrainedResult(tuple(self.hypotheses), 30, len(c), 40) for c in constraints]


class _Resources:
    def __init__(self, llm: _FakeLLM) -> None:
        self._llm = llm

    def llm(self, role: str) -> _FakeLLM:
        return self._llm

    def llm_name(self, role: str) -> str:
        return "smollm2"

    def llm_config(self, role: str) -> dict[str, Any]:
        return {"backend": "hf", "prompt_format": None}

    def prompt(self, key: str) -> Any:
        from hallulab.llm.prompts import load_prompt

        names = {
            "self_familiarity.explanation_prompt": "sf_explanation",
            "self_familiarity.inference_prompt": "sf_inference",
        }
        return load_prompt(names[key])


def _score_with_fake_llm(
    hypotheses: list[dict[str, Any]], *, llm: _FakeLLM | None = None, concept: str = "Pepsi"
) -> Any:
    from hallulab.core.config import compose
    from hallulab.data.schema import Record
    from hallulab.methods.self_familiarity import SPEC
    from hallulab.methods.self_familiarity.score import score
    from hallulab.pipeline.context import BuildContext
    from hallulab.pipeline.params import ParamsView

    llm = llm or _FakeLLM(hypotheses)
    params = compose(overrides=["dataset=concept7", "self_familiarity.score.baselines=[]"])
    view = ParamsView(params, SPEC.score.param_keys(), "score_self_familiarity")
    entry = {"text": concept, "position": 8, "log_frequency": -1.0, "words": concept.split()}
    concepts = {
        "records": {
            "r": {"processings": {name: [entry] for name in ("full", "no_grouping", "no_filtering", "no_ranking")}}
        }
    }
    record = Record(id="r", response=None, sentences=(), prompt=f"What is {concept}?")
    ctx = BuildContext("t", [record], {"concepts": concepts}, view, _Resources(llm), logging.getLogger("t"))  # type: ignore[arg-type]
    raw = score(ctx)
    assert llm.generated[0].max_new_tokens == 100
    (params_used,) = llm.params
    assert params_used.normalise == "total"
    return raw
