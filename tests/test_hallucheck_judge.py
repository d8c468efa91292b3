"""HalluCheck's released alignment: the judge prompt and its batching (one prompt per response),
the released reading of its reply with every malformed reply counted, the headline beside the
token-F1 reading, the judge's role checks, and the benchmark row's label."""

from __future__ import annotations

import math
from collections import Counter
from types import SimpleNamespace
from typing import Any, cast

import pytest

from hallulab.core.config import ConfigError, compose
from hallulab.llm.prompts import load_prompt
from hallulab.methods.hallucheck import SPEC
from hallulab.methods.hallucheck.aggregate import CHECK_MODES, RELEASED, fact_flag, require_verdicts
from hallulab.methods.hallucheck.judge import OUTCOMES, pairs_text, parse_judge_reply
from hallulab.methods.hallucheck.knobs import HalluCheckKnobs, HalluCheckScoreKnobs
from hallulab.methods.hallucheck.raw import CheckedFact, HalluCheckScores
from hallulab.methods.hallucheck.row_label import row_label
from hallulab.methods.hallucheck.score import _judge_records
from hallulab.pipeline.row_labels import CellSetting

PEAKED = [math.log(x) for x in (0.96, 0.01, 0.01, 0.01, 0.01)]
KEY = "generator/greedy"


def _span(text: str) -> dict[str, object]:
    return {"text": text, "start": 0, "end": len(text), "how": "copied"}


def _fact(index: int, original: str | None, regenerated: str | None, question: str | None = "Who?") -> CheckedFact:
    """A fact whose answer spans are ``original`` (in the response) and ``regenerated`` (None: a
    text without words); ``question`` None: none was formed, so no answers."""
    entry: dict[str, Any] = {"index": index, "text": "x", "sentence_index": 0, "question": question}
    if question is not None:
        answer = {"text": regenerated or "", "steps": [regenerated or ""], "top": [PEAKED]}
        answer["span"] = _span(regenerated) if regenerated else None
        entry["answers"] = {KEY: answer}
        entry["original_span"] = _span(original) if original else None
    return cast(CheckedFact, entry)


def test_the_judge_prompt_is_the_released_one_with_every_pair_numbered() -> None:
    """build_robust_prompt: one user message, the expert's instructions, five examples, then the
    response's pairs numbered as released and "Output:" last."""
    template = load_prompt("hallucheck_judge")
    assert template.variables == ["n", "pairs"] and template.system is None and not template.examples
    pairs = [("Warsaw", "Paris"), ("1867", "1867")]
    assert (
        pairs_text(pairs)
        == '1. Extracted: "Warsaw"\n   Regenerated: "Paris"\n2. Extracted: "1867"\n   Regenerated: "1867"'
    )
    messages = template.messages(n="2", pairs=pairs_text(pairs))
    assert [m["role"] for m in messages] == ["user"]
    text = messages[0]["content"]
    assert text.startswith("You are a fact comparison expert.")
    assert "Return a Python-style list of exactly 2 binary values (0 or 1)" in text
    assert 'Extracted: "Microsoft"\nRegenerated: "Apple"\n→ 1' in text  # the fifth example
    assert text.endswith(
        'Now judge the following fact pairs:\n\n1. Extracted: "Warsaw"\n   Regenerated: "Paris"\n'
        '2. Extracted: "1867"\n   Regenerated: "1867"\n\nOutput:'
    )


@pytest.mark.parametrize(
    ("reply", "verdicts", "outcome"),
    [
        ("[0, 1]", (True, False), "parsed"),
        ("  [0,1]\n", (True, False), "parsed"),  # stripped, as released
        ("[True, False]", (False, True), "parsed"),  # the released test, x in [0, 1], lets bools through
        ("[0, 1, 1]", (True, False), "too_long"),  # the released indexing reads the first n
        ("[0]", (None, None), "too_short"),
        ("Output: [0, 1]", (None, None), "malformed"),  # the whole reply is the literal
        ("[0, 2]", (None, None), "malformed"),
        ("0", (None, None), "malformed"),
        ("[[0], 1]", (None, None), "malformed"),
        ("", (None, None), "malformed"),
        ("[0, 1", (None, None), "malformed"),
        ("__import__('os')", (None, None), "malformed"),  # a literal only, never evaluated
    ],
)
def test_a_judge_reply_is_read_as_released_and_a_malformed_one_is_counted(
    reply: str, verdicts: tuple[bool | None, ...], outcome: str
) -> None:
    read = parse_judge_reply(reply, 2)
    assert (read.verdicts, read.outcome) == (verdicts, outcome)
    assert read.outcome in OUTCOMES


class _Judge:
    """A stand-in for the judge role: replies by the number of pairs, records every call."""

    def __init__(self, replies: dict[int, str]) -> None:
        self.replies = replies
        self.asked: list[list[dict[str, str]]] = []
        self.params: list[Any] = []

    def generate(self, prompts: list[list[dict[str, str]]], params: Any) -> list[SimpleNamespace]:
        self.asked.extend(prompts)
        self.params.append(params)
        return [SimpleNamespace(text=self.replies[p[-1]["content"].count('Extracted: "') - 5]) for p in prompts]


def _context(judge: _Judge) -> Any:
    template = load_prompt("hallucheck_judge")
    resources = SimpleNamespace(llm=lambda role: judge, prompt=lambda key: template)
    return SimpleNamespace(resources=resources)


def test_one_judge_prompt_per_response_lists_its_facts_in_order_and_counts_every_reply() -> None:
    """compare_orig_and_regenerated: every fact of a response in one prompt, in order; a fact
    without a question is not asked about, one without a span is counted and gets no verdict; a
    malformed reply leaves its response's facts without one."""
    records: dict[str, dict[str, list[CheckedFact]]] = {
        "a": {
            "ner": [
                _fact(0, "Warsaw", "Warsaw, Poland"),
                _fact(1, None, None, question=None),
                _fact(2, "1867", "1901"),
                _fact(3, "Curie", None),
            ]
        },
        "b": {"ner": [_fact(0, "Paris", "Paris")]},
    }
    judge = _Judge({2: "[0, 1]", 1: "Output: [0]"})
    counts: Counter[str] = Counter()
    _judge_records(_context(judge), HalluCheckScoreKnobs(), records, [KEY], counts)
    assert len(judge.asked) == 2 and all(len(prompt) == 1 for prompt in judge.asked)
    first = judge.asked[0][0]["content"]
    assert '1. Extracted: "Warsaw"\n   Regenerated: "Warsaw, Poland"\n2. Extracted: "1867"' in first
    assert "exactly 2 binary values" in first
    assert judge.params[0].greedy and judge.params[0].max_new_tokens == 100  # the released call
    a, b = records["a"]["ner"], records["b"]["ner"]
    assert [entry.get("judge") for entry in a] == [{KEY: True}, None, {KEY: False}, {KEY: None}]
    assert b[0]["judge"] == {KEY: None}
    assert counts == {
        "judge_prompts": 2,
        "judge_replies_parsed": 1,
        "judge_replies_too_long": 0,
        "judge_replies_too_short": 0,
        "judge_replies_malformed": 1,
        "judge_pairs": 3,
        "judge_same": 1,
        "judge_different": 1,
        "judge_pairs_without_spans": 1,
    }


def test_without_the_judge_no_call_is_made_and_its_counts_are_written_as_0() -> None:
    records = {"a": {"ner": [_fact(0, "Warsaw", "Warsaw")]}}
    judge = _Judge({})
    counts: Counter[str] = Counter()
    _judge_records(_context(judge), HalluCheckScoreKnobs(judge=False), records, [KEY], counts)
    assert not judge.asked and "judge" not in records["a"]["ner"][0]
    assert counts["judge_prompts"] == 0 and "judge_same" in counts and "judge_different" in counts


def _mode(suffix: str) -> Any:
    return next(m for m in CHECK_MODES if m.suffix == suffix)


def test_the_headline_aligns_by_the_judge_and_token_f1_is_a_labelled_reading() -> None:
    """The released alignment is the judge's verdict; token F1 >= 0.6 on the same two spans is
    the ``_f1`` reading, with the same KS check."""
    entry = _fact(0, "Warsaw, Poland", "Warsaw, Poland")
    knobs = HalluCheckKnobs()
    assert knobs.alignment == "judge"
    entry["judge"] = {KEY: False}  # the judge: not the same thing; F1 1.0
    assert fact_flag(entry, KEY, knobs, RELEASED) is True
    assert fact_flag(entry, KEY, knobs, _mode("_f1")) is False
    entry["judge"] = {KEY: True}
    entry["original_span"] = _span("Marie Curie")  # F1 0: the judge alone aligns it
    assert fact_flag(entry, KEY, knobs, RELEASED) is False and fact_flag(entry, KEY, knobs, _mode("_align")) is False
    assert fact_flag(entry, KEY, knobs, _mode("_f1")) is True
    counts: Counter[str] = Counter()
    entry["judge"] = {KEY: None}  # its reply was not read
    assert fact_flag(entry, KEY, knobs, RELEASED, counts) is None
    assert counts == {"judge_no_verdict_unchecked": 1}
    # the readings that do not compare the two spans align by token F1: the judge saw only spans
    assert all(m.alignment == "f1" for m in CHECK_MODES if m.answer != "spans")
    assert {m.suffix for m in CHECK_MODES if m.alignment is None} == {"", "_align", "_ksminmax", "_allsteps"}


def test_the_judges_alignment_without_verdicts_is_a_one_line_error_naming_the_fix() -> None:
    raw = HalluCheckScores(
        taggings=["ner"], regenerations=[KEY], llms={}, records={"r1": {"ner": [_fact(0, "Warsaw", "Warsaw")]}}
    )
    with pytest.raises(ConfigError, match=r"record 'r1' \(ner fact 0\): field 'judge'.*hallucheck.score.judge=true"):
        require_verdicts(raw, HalluCheckKnobs())
    require_verdicts(raw, HalluCheckKnobs(alignment="f1"))  # token F1 needs no verdict


def test_the_defaults_ask_the_judge_with_the_released_reply_length() -> None:
    composed = compose(["dataset=nq_open"])["hallucheck"]
    assert composed["score"]["judge"] is True and composed["score"]["judge_max_new_tokens"] == 100
    assert composed["aggregate"]["alignment"] == "judge"
    assert SPEC.benchmark_variants == ("hallucheck_ner_greedy", "hallucheck_ner_greedy_f1")


def _diagnostics(parsed: int, malformed: int, same: int, different: int) -> dict[str, Any]:
    paths = {"passed": 3, "ks_uniform": 1, "misaligned": 6, "no_verdict": 0, "no_question": 0}
    return {
        "judge_prompts": parsed + malformed,
        "judge_replies_parsed": parsed,
        "judge_replies_too_long": 0,
        "judge_replies_malformed": malformed,
        "judge_same": same,
        "judge_different": different,
        "decision_paths": {"ner/generator/greedy": paths},
        "decision_paths_f1": {"ner/generator/greedy": paths},
    }


def test_a_judge_that_cannot_reply_in_the_released_format_makes_its_cell_model_limited() -> None:
    """The judge's checks apply to the headline only: a cell whose judge replied with no
    readable list, or judged every pair alike, is model-limited; the token-F1 row reads no reply."""
    from hallulab.benchmark.validity import role_limited

    def readings(variant: str, diagnostics: dict[str, Any]) -> dict[str, bool]:
        checks = [c for c in SPEC.role_checks if c.applies_to(variant) and c.role == "judge"]
        return {c.read(diagnostics, "f").label: role_limited(c.read(diagnostics, "f")) for c in checks}

    sound = readings("hallucheck_ner_greedy", _diagnostics(parsed=9, malformed=1, same=5, different=4))
    assert len(sound) == 2 and not any(sound.values())
    unread = readings("hallucheck_ner_greedy", _diagnostics(parsed=1, malformed=9, same=1, different=1))
    assert unread["replies read as a list of one 0 or 1 per fact"]
    alike = readings("hallucheck_ner_greedy", _diagnostics(parsed=10, malformed=0, same=0, different=30))
    assert any(alike.values())
    assert readings("hallucheck_ner_greedy_f1", _diagnostics(parsed=0, malformed=10, same=0, different=0)) == {}


def _cell(dataset: str, responses_by: str | None, alignment: str = "judge") -> CellSetting:
    return CellSetting(
        dataset=dataset,
        responses_by=responses_by,
        models={"generator": "smollm2-135m-instruct", "judge": "smollm2-135m-instruct"},
        params={
            "hallucheck": {"score": {"num_beams": 5, "decodings": ["greedy"]}, "aggregate": {"alignment": alignment}}
        },
    )


def test_the_benchmark_row_says_whose_answers_are_regenerated_by_whom_and_the_released_decoding() -> None:
    """Read from the cells: the data's authors (each once, in column order), the generator's model,
    the row's decoding beside the released call's, and who aligns the spans."""
    cells = [_cell("hotpotqa", "GPT-3.5"), _cell("nq_open", "GPT-3.5"), _cell("wikibio", "GPT-3")]
    assert row_label("hallucheck_ner_greedy", cells) == (
        "answers by the data's GPT-3.5 / GPT-3, regenerated by smollm2-135m-instruct (greedy decoding; the "
        "released call: 5-beam search), judged by smollm2-135m-instruct"
    )
    assert row_label("hallucheck_ner_greedy_f1", cells).endswith("5-beam search), aligned by token F1")
    assert "(5-beam search, the released call)" in row_label("hallucheck_ner_beam", cells)
    own = row_label("hallucheck_ner_greedy", [_cell("nq_open", None)])
    assert own.startswith("answers by smollm2-135m-instruct itself, regenerated by")


def test_the_table_reads_whose_answers_a_cell_scored_from_its_loader_and_its_run() -> None:
    from hallulab.benchmark.applicability import BenchmarkDataset
    from hallulab.benchmark.table import cell_setting, row_title
    from hallulab.data.sets import dataset_spec
    from hallulab.results.published import ModelRef, PublishedResult

    def result(overrides: list[str]) -> PublishedResult:
        model = ModelRef(
            role="generator", entry="smollm2", name="smollm2-135m-instruct", backend="hf", source="", sha256=""
        )
        params = {
            "dataset": {"name": "nq_open"},
            "hallucheck": {"score": {"num_beams": 5}, "aggregate": {"alignment": "f1"}},
        }
        return PublishedResult("n", "nq_open", "hallucheck", "", "", False, overrides, params, [model], {}, {}, {})

    column = BenchmarkDataset("nq_open", "sac3", dataset_spec("sac3").provision, {})
    assert cell_setting(column, result([])).responses_by == "GPT-3.5"
    assert cell_setting(column, result(["generate.mode=all"])).responses_by is None  # the generator wrote them
    setting = cell_setting(column, result([]))
    assert setting.models == {"generator": "smollm2-135m-instruct"}
    title = row_title(SPEC, "hallucheck_ner_greedy", [setting])
    assert title.startswith(SPEC.title + ": answers by the data's GPT-3.5, regenerated by smollm2-135m-instruct")
    assert row_title(SPEC, "hallucheck_ner_greedy", []) == SPEC.title
