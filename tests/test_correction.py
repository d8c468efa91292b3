"""FactSelfCheck §4.5 correction: thresholds chosen on the development split, the reply
parsers, and Table 3's shares."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import pytest

from hallulab.artifacts.knowledge_graphs import RecordGraphs, Triple
from hallulab.core.errors import UserFacingError
from hallulab.core.units import ScoreTable
from hallulab.correction.fact_labels import FactLabels, JudgedFact, unique_facts
from hallulab.correction.knobs import CorrectionKnobs
from hallulab.correction.parsing import parse_numbered, parse_verdict
from hallulab.correction.run import ROWS, Correction, correct, format_free_verdict, require_variant, table3, table3_p_no
from hallulab.correction.selection import f1_threshold, in_dev_split
from hallulab.correction.thresholds import released_thresholds, thresholds
from hallulab.data.schema import Record
from hallulab.llm.base import Generation
from hallulab.llm.prompts import PromptTemplate


def test_the_threshold_maximises_f1_over_the_distinct_scores() -> None:
    threshold, f1 = f1_threshold([0.1, 0.4, 0.6, 0.9], [False, False, True, True])
    assert (threshold, f1) == (0.6, 1.0)
    threshold, f1 = f1_threshold([0.5, 0.5, 0.2], [True, False, False])  # F1 2/3 at 0.5, 1/2 at 0.2
    assert threshold == 0.5 and f1 == pytest.approx(2 / 3)


def test_no_positive_dev_label_gives_no_threshold_rather_than_nan() -> None:
    threshold, f1 = f1_threshold([0.3, 0.7], [False, False])
    assert math.isnan(threshold) and math.isnan(f1)
    table = ScoreTable()
    table.add_sentences("prompt", "p", [0.3, 0.7], [None, None])
    frame = table.frame()
    dev = [Record(id="p", response="A. B.", sentences=["A.", "B."], labels=[0.0, 0.0], samples=["x"])]
    chosen = thresholds(dev, frame, "prompt", {})
    assert chosen == {"sentence": None, "sentence_dev_f1": None, "fact": None, "fact_dev_f1": None}


def test_thresholds_read_the_dev_labels_and_a_factless_sentence_is_left_out() -> None:
    table = ScoreTable()
    table.add_sentences("prompt", "p", [0.2, 0.8, 0.6], [None, None, None])
    dev = [Record(id="p", response="A. B. C.", sentences=["A.", "B.", "C."], labels=[0.0, 1.0, 0.5], samples=["x"])]
    facts = {"p": [(1, "(a, b, c)", 0.9), (2, "(d, e, f)", 0.4)]}  # sentence 0 has no fact
    chosen = thresholds(dev, table.frame(), "prompt", facts)
    assert chosen["sentence"] == 0.6 and chosen["sentence_dev_f1"] == 1.0
    assert chosen["fact"] == 0.4 and chosen["fact_dev_f1"] == 1.0


def test_a_fact_threshold_never_flags_sentences_that_hold_no_fact() -> None:
    """A hallucinated sentence without facts cannot be flagged at the fact level at test time;
    Table 3's rule leaves it out of the curve (the released code drops its None aggregate), so
    no threshold below every fact score is chosen to reach it."""
    table = ScoreTable()
    table.add_sentences("prompt", "p", [0.2, 0.8, 0.6], [None, None, None])
    dev = [Record(id="p", response="A. B. C.", sentences=["A.", "B.", "C."], labels=[1.0, 0.0, 1.0], samples=["x"])]
    facts = {"p": [(1, "(a, b, c)", 0.2), (2, "(d, e, f)", 0.9)]}  # sentence 0: hallucinated, no fact
    chosen = thresholds(dev, table.frame(), "prompt", facts)
    assert chosen["fact"] == 0.9 and chosen["fact_dev_f1"] == 1.0
    assert released_thresholds(dev, table.frame(), "prompt", facts)["sentences_without_facts"] == 1
    nothing = f1_threshold([float("-inf"), float("-inf")], [True, False])
    assert math.isnan(nothing[0]) and math.isnan(nothing[1])


def test_the_dev_fact_threshold_is_chosen_by_fact_level_f1_on_judged_facts() -> None:
    """This project's dev reading: the fact threshold of highest F1 over judge-labelled facts
    (the fact-level evaluation of FactSelfCheck's Appendix C). Through the sentence labels
    (Table 3's rule) the same scores give another threshold: sentence 1 holds a supported fact
    scored 0.9 beside a hallucinated one scored 0.5, so the sentence reading sees their mean."""
    table = ScoreTable()
    table.add_sentences("prompt", "p", [0.2, 0.8], [None, None])
    dev = [Record(id="p", response="A. B.", sentences=["A.", "B."], labels=[0.0, 1.0], samples=["x"])]
    facts = {"p": [(0, "(a, b, c)", 0.3), (1, "(d, e, f)", 0.9), (1, "(g, h, i)", 0.5)]}
    by_sentences = thresholds(dev, table.frame(), "prompt", facts)
    assert by_sentences["fact"] == 0.7 and by_sentences["fact_dev_f1"] == 1.0
    judged = FactLabels(
        (
            JudgedFact("p", "(a, b, c)", 0.3, hallucinated=False),
            JudgedFact("p", "(d, e, f)", 0.9, hallucinated=False),
            JudgedFact("p", "(g, h, i)", 0.5, hallucinated=True),
        ),
        from_reply=2,
        from_first_token=1,
        unlabelled=1,
    )
    by_facts = thresholds(dev, table.frame(), "prompt", facts, judged)
    assert by_facts["fact"] == 0.5 and by_facts["fact_dev_f1"] == pytest.approx(2 / 3)
    assert by_facts["sentence"] == by_sentences["sentence"]
    assert judged.counts() == {
        "dev_facts_judged": 4,
        "dev_facts_hallucinated": 1,
        "dev_fact_labels_from_reply": 2,
        "dev_fact_labels_from_first_token": 1,
        "dev_facts_unlabelled": 1,
    }


def test_a_fact_in_several_sentences_is_judged_once_per_passage() -> None:
    dev = [
        Record(id="p", response="A. B.", sentences=["A.", "B."], labels=[0.0, 1.0], samples=["x"]),
        Record(id="q", response="C.", sentences=["C."], labels=[0.0], samples=["x"]),
    ]
    facts = {"p": [(0, "(a, b, c)", 0.3), (1, "(a, b, c)", 0.3), (1, "(d, e, f)", 0.9)], "q": [(0, "(a, b, c)", 0.1)]}
    assert [(p.id, t, s) for p, t, s in unique_facts(dev, facts)] == [
        ("p", "(a, b, c)", 0.3),
        ("p", "(d, e, f)", 0.9),
        ("q", "(a, b, c)", 0.1),
    ]


def test_the_dev_split_is_stable_and_near_its_fraction() -> None:
    ids = [f"r{i}" for i in range(2000)]
    first = [in_dev_split(i, 0.3, 0) for i in ids]
    assert first == [in_dev_split(i, 0.3, 0) for i in ids]
    assert 0.26 < sum(first) / len(ids) < 0.34
    assert first != [in_dev_split(i, 0.3, 1) for i in ids]


def test_numbered_replies_need_every_sentence_and_verdicts_map_to_the_three_labels() -> None:
    assert parse_numbered("1. A cat.\n2) A dog.\nnoise", 2) == ["A cat.", "A dog."]
    assert parse_numbered("1. A cat.\n1. Again.\n3. Too far.", 2) is None
    assert [parse_verdict(x) for x in ("Yes.", "no", "Refused", "Maybe")] == [
        "factual",
        "non-factual",
        "refused",
        None,
    ]


def test_table3_gives_shares_per_level_and_their_change_from_the_baseline() -> None:
    jobs = [
        Correction("p", "baseline", [], ["a", "b"], ["factual", "non-factual"]),
        Correction("p", "sentence", ["b"], ["a", "b"], ["factual", "factual"], reading="released"),
        Correction("p", "fact", ["x"], ["a", "b"], ["factual", None], reading="released"),  # None is left out
    ]
    rows = table3(jobs)
    assert rows["baseline"]["factual"] == 0.5 and rows["baseline"]["factual_change_percent"] is None
    sentence, fact = rows["sentence_released"], rows["fact_released"]
    assert sentence["factual"] == 1.0 and sentence["factual_change_percent"] == 100.0
    assert fact["factual"] == 1.0 and fact["non-factual_change_percent"] == -100.0
    assert sentence["refused"] == 0.0 and sentence["refused_change_percent"] is None
    assert rows["fact_dev"]["factual"] is None  # no job under the dev reading: no share


def test_the_p_no_reading_gives_factual_and_non_factual_shares_without_a_reply_format() -> None:
    assert format_free_verdict(0.7) == "non-factual" and format_free_verdict(0.5) == "factual"
    assert format_free_verdict(None) is None
    jobs = [
        Correction("p", "baseline", [], ["a", "b"], [None, None], p_no=[0.9, 0.8]),  # replies that parse as nothing
        Correction("p", "sentence", ["b"], ["a", "b"], [None, None], p_no=[0.2, 0.9], reading="dev"),
        Correction("p", "fact", ["x"], ["a", "b"], [None, None], p_no=[0.1, None], reading="dev"),  # no word in top-K
    ]
    rows = table3_p_no(jobs)
    assert rows["baseline"] == {
        "factual": 0.0,
        "factual_change_percent": None,
        "non-factual": 1.0,
        "non-factual_change_percent": None,
    }
    assert rows["sentence_dev"]["factual"] == 0.5 and rows["sentence_dev"]["non-factual_change_percent"] == -50.0
    assert rows["fact_dev"]["factual"] == 1.0 and "refused" not in rows["fact_dev"]
    assert table3(jobs)["baseline"]["factual"] is None  # the format reading has nothing to count


def test_a_misspelt_detector_variant_is_an_error_naming_the_available_ones() -> None:
    """correction.fact_variant=fsc_kg_frq once ran with rc 0, flagged nothing, and Table 3's
    fact row equalled the baseline; now it stops with the setting and what is available."""
    table = ScoreTable()
    table.add("fsc_kg_freq", "fact", "p", 0, 0.9, sentence_index=0)
    with pytest.raises(
        UserFacingError,
        match=r"correction.fact_variant: 'fsc_kg_frq' scores no fact here; available: \['fsc_kg_freq'\]",
    ):
        require_variant("correction.fact_variant", "fsc_kg_frq", table.frame(), "fact")
    require_variant("correction.fact_variant", "fsc_kg_freq", table.frame(), "fact")


# ---- Table 3's rule (item: the released reading beside the paper's number) ----------------


def _three_sentences() -> tuple[list[Record], dict[str, list[tuple[int, str, float]]]]:
    """Sentence 0 (accurate) holds a fact scored 0.9 and one scored 0.1 (mean 0.5, max 0.9);
    sentence 1 (hallucinated) one fact scored 0.7; sentence 2 (hallucinated) no fact at all."""
    records = [Record(id="p", response="A. B. C.", sentences=["A.", "B.", "C."], labels=[0.0, 1.0, 1.0])]
    facts = {"p": [(0, "(a, b, c)", 0.9), (0, "(d, e, f)", 0.1), (1, "(g, h, i)", 0.7)]}
    return records, facts


def test_the_sentence_route_mean_aggregates_fact_scores_and_leaves_factless_sentences_out() -> None:
    """FactSelfCheck's released scripts/correction/correct.py: FactSelfCheck-Text's sentence
    score is the mean of its facts' scores; a sentence without facts scores None and is dropped
    before the F1 curve. By the mean, sentence 1 (0.7) ranks above sentence 0 (0.5): F1 1 at
    0.7; by the max, sentence 0 (0.9) would rank first, and the factless hallucinated sentence
    would count as missed."""
    records, facts = _three_sentences()
    table = ScoreTable()
    table.add_sentences("prompt", "p", [0.2, 0.8, 0.6], [None, None, None])
    chosen = thresholds(records, table.frame(), "prompt", facts)
    assert chosen["fact"] == 0.7 and chosen["fact_dev_f1"] == 1.0


def test_the_released_reading_chooses_on_every_labelled_passage_with_ties_to_the_lower_threshold() -> None:
    """Table 3's thresholds (0.3 for FactSelfCheck-Text, 0.75 for SelfCheckGPT) are the highest
    sentence-level F1 on the data set's own labels: the released code runs sklearn's
    precision_recall_curve on the evaluated passages and takes np.argmax, the first (lowest)
    of equal-F1 thresholds."""
    scores, positive = [0.9, 0.5, 0.4, 0.3], [True, False, False, True]  # F1 2/3 at 0.9 and at 0.3
    assert f1_threshold(scores, positive, ties="lower") == (0.3, pytest.approx(2 / 3))
    assert f1_threshold(scores, positive) == (0.9, pytest.approx(2 / 3))  # this project's dev rule: higher
    records, facts = _three_sentences()
    other = Record(id="q", response="D.", sentences=["D."], labels=[0.0])
    facts["q"] = [(0, "(j, k, l)", 0.8)]
    table = ScoreTable()
    table.add_sentences("prompt", "p", [0.2, 0.8, 0.6], [None, None, None])
    table.add_sentences("prompt", "q", [0.9], [None])
    chosen = released_thresholds([*records, other], table.frame(), "prompt", facts)
    assert chosen == {
        "sentence": 0.6,  # 0.6 flags both hallucinated sentences of p (F1 0.8 beside q's 0.9)
        "sentence_f1": pytest.approx(0.8),
        "fact": 0.7,  # by the mean over each sentence's facts: 0.5 (p0), 0.7 (p1), 0.8 (q0)
        "fact_f1": pytest.approx(2 / 3),
        "passages": 2,
        "sentences_without_facts": 1,
    }


class _Scripted:
    """A stand-in for the corrector and judge roles: replies by rule, records every prompt."""

    capabilities = type("Capabilities", (), {"top_k_alternatives": False})()

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def generate(self, prompts: Sequence[Any], params: Any, seeds: Any = None) -> list[Generation]:
        texts = [m[-1]["content"] if not isinstance(m, str) else m for m in prompts]
        self.prompts.extend(texts)
        return [Generation(text=self.reply(t)) for t in texts]


def _template(name: str, fields: str) -> PromptTemplate:
    return PromptTemplate(name=name, human=f"{name}: {fields}")


def test_correction_runs_the_released_reading_beside_the_dev_split_one() -> None:
    """Every test passage is corrected under both readings: Table 3's (``*_released``: both
    thresholds chosen on the data set's labels, the fact one through mean-aggregated sentence
    scores) and this project's (``*_dev``: chosen on the development split only); one
    baseline, shared."""
    ids = [f"r{i}" for i in range(12)]
    records = [
        Record(
            id=rid,
            prompt=f"About {rid}",
            response="A. B.",
            sentences=["A.", "B."],
            labels=[0.0, 1.0],
            samples=["x"],
            reference="ref",
        )
        for rid in ids
    ]
    table = ScoreTable()
    for rid in ids:
        table.add_sentences("prompt", rid, [0.2, 0.8], [None, None])
    facts = ScoreTable()
    for rid in ids:
        facts.add("fsc_kg_freq", "fact", rid, 0, 0.1, sentence_index=0)
        facts.add("fsc_kg_freq", "fact", rid, 1, 0.9, sentence_index=1)
    graphs = {rid: _graphs() for rid in ids}
    corrector = _Scripted(lambda text: "1. A.\n2. B.")
    judge = _Scripted(lambda text: "Yes")
    prompts = {
        "baseline": _template("baseline", "{prompt} {response} {flagged}"),
        "sentence": _template("sentence", "{prompt} {response} {flagged}"),
        "fact": _template("fact", "{prompt} {response} {flagged}"),
        "judge": _template("judge", "{reference} {sentence}"),
        "fact_judge": _template("fact_judge", "{reference} {fact}"),
    }
    cfg = CorrectionKnobs(fact_variant="fsc_kg_freq", fact_threshold_labels="sentence", judge_top_k=0)
    jobs, diagnostics = correct(
        records, table.frame(), facts.frame(), graphs, cfg, prompts, cast(Any, corrector), cast(Any, judge)
    )
    test = diagnostics["test_passages"]
    assert test + diagnostics["dev_passages"] == len(ids) and test > 0
    assert sorted({job.row for job in jobs}) == sorted(ROWS)
    assert ROWS == ("baseline", "sentence_released", "fact_released", "sentence_dev", "fact_dev")
    assert diagnostics["released_thresholds"]["passages"] == len(ids)
    assert diagnostics["released_thresholds"]["fact"] == 0.9
    released = [job for job in jobs if job.row == "fact_released"]
    assert len(released) == test and all(job.flagged == ["(b, r, c)"] for job in released)
    rows = table3(jobs)
    assert list(rows) == ["baseline", "sentence_released", "fact_released", "sentence_dev", "fact_dev"]
    assert rows["fact_released"]["factual"] == 1.0


def _graphs() -> RecordGraphs:
    return RecordGraphs((), (), ((Triple("a", "r", "c"),), (Triple("b", "r", "c"),)), ())


def test_the_docs_no_longer_say_table_3s_fact_threshold_is_appendix_cs() -> None:
    """Appendix C's fact-level 0.4 classifies the facts of Table 10 and Figure 6; Table 3 flags
    facts with 0.3, the highest sentence-level F1 (§4.5)."""
    root = Path(__file__).resolve().parents[1]
    for path in (
        root / "docs" / "papers" / "factselfcheck.md",
        root / "src" / "hallulab" / "correction" / "__init__.py",
        root / "src" / "hallulab" / "correction" / "run.py",
        root / "conf" / "stage" / "correction.yaml",
    ):
        text = " ".join(path.read_text(encoding="utf-8").split())
        assert "Appendix C chooses it" not in text, path
        assert "the paper (Appendix C): fact-level F1" not in text, path
