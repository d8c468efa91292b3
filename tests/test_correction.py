"""FactSelfCheck §4.5 correction: thresholds chosen on the development split, the reply
parsers, and Table 3's shares."""

from __future__ import annotations

import math

import pytest

from hallulab.core.errors import UserFacingError
from hallulab.core.units import ScoreTable
from hallulab.correction.fact_labels import FactLabels, JudgedFact, unique_facts
from hallulab.correction.parsing import parse_numbered, parse_verdict
from hallulab.correction.run import (
    Correction,
    CorrectionConfig,
    format_free_verdict,
    require_variant,
    table3,
    table3_p_no,
    thresholds,
)
from hallulab.correction.selection import f1_threshold, in_dev_split
from hallulab.data.schema import Passage


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
    dev = [Passage(id="p", response="A. B.", sentences=["A.", "B."], labels=[0.0, 0.0], samples=["x"])]
    chosen = thresholds(dev, frame, CorrectionConfig(sentence_variant="prompt"), {})
    assert chosen == {"sentence": None, "sentence_dev_f1": None, "fact": None, "fact_dev_f1": None}


def test_thresholds_read_the_dev_labels_and_a_factless_sentence_ranks_below_every_fact() -> None:
    table = ScoreTable()
    table.add_sentences("prompt", "p", [0.2, 0.8, 0.6], [None, None, None])
    dev = [Passage(id="p", response="A. B. C.", sentences=["A.", "B.", "C."], labels=[0.0, 1.0, 0.5], samples=["x"])]
    facts = {"p": [(1, "(a, b, c)", 0.9), (2, "(d, e, f)", 0.4)]}  # sentence 0 has no fact
    chosen = thresholds(dev, table.frame(), CorrectionConfig(sentence_variant="prompt"), facts)
    assert chosen["sentence"] == 0.6 and chosen["sentence_dev_f1"] == 1.0
    assert chosen["fact"] == 0.4 and chosen["fact_dev_f1"] == 1.0


def test_a_fact_threshold_never_flags_sentences_that_hold_no_fact() -> None:
    """A hallucinated sentence without facts cannot be flagged at the fact level at test time;
    a threshold below every fact score (which would count it as flagged on dev) is not chosen."""
    table = ScoreTable()
    table.add_sentences("prompt", "p", [0.2, 0.8, 0.6], [None, None, None])
    dev = [Passage(id="p", response="A. B. C.", sentences=["A.", "B.", "C."], labels=[1.0, 0.0, 1.0], samples=["x"])]
    facts = {"p": [(1, "(a, b, c)", 0.2), (2, "(d, e, f)", 0.9)]}  # sentence 0: hallucinated, no fact
    chosen = thresholds(dev, table.frame(), CorrectionConfig(sentence_variant="prompt"), facts)
    assert chosen["fact"] == 0.9 and chosen["fact_dev_f1"] == pytest.approx(2 / 3)
    nothing = f1_threshold([float("-inf"), float("-inf")], [True, False])
    assert math.isnan(nothing[0]) and math.isnan(nothing[1])


def test_the_fact_threshold_is_chosen_by_fact_level_f1_on_judged_facts_as_the_paper_does() -> None:
    """FactSelfCheck Appendix C: the fact threshold of highest F1 over judge-labelled facts.
    Through the sentence labels the same scores give another threshold: sentence 1 holds a
    supported fact scored 0.9 beside a hallucinated one scored 0.5, so the sentence reading
    can only see its maximum."""
    table = ScoreTable()
    table.add_sentences("prompt", "p", [0.2, 0.8], [None, None])
    dev = [Passage(id="p", response="A. B.", sentences=["A.", "B."], labels=[0.0, 1.0], samples=["x"])]
    facts = {"p": [(0, "(a, b, c)", 0.3), (1, "(d, e, f)", 0.9), (1, "(g, h, i)", 0.5)]}
    by_sentences = thresholds(dev, table.frame(), CorrectionConfig(sentence_variant="prompt"), facts)
    assert by_sentences["fact"] == 0.9 and by_sentences["fact_dev_f1"] == 1.0
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
    by_facts = thresholds(dev, table.frame(), CorrectionConfig(sentence_variant="prompt"), facts, judged)
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
        Passage(id="p", response="A. B.", sentences=["A.", "B."], labels=[0.0, 1.0], samples=["x"]),
        Passage(id="q", response="C.", sentences=["C."], labels=[0.0], samples=["x"]),
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
        Correction("p", "sentence", ["b"], ["a", "b"], ["factual", "factual"]),
        Correction("p", "fact", ["x"], ["a", "b"], ["factual", None]),  # an unparseable verdict is left out
    ]
    rows = table3(jobs)
    assert rows["baseline"]["factual"] == 0.5 and rows["baseline"]["factual_change_percent"] is None
    assert rows["sentence"]["factual"] == 1.0 and rows["sentence"]["factual_change_percent"] == 100.0
    assert rows["fact"]["factual"] == 1.0 and rows["fact"]["non-factual_change_percent"] == -100.0
    assert rows["sentence"]["refused"] == 0.0 and rows["sentence"]["refused_change_percent"] is None


def test_the_p_no_reading_gives_factual_and_non_factual_shares_without_a_reply_format() -> None:
    assert format_free_verdict(0.7) == "non-factual" and format_free_verdict(0.5) == "factual"
    assert format_free_verdict(None) is None
    jobs = [
        Correction("p", "baseline", [], ["a", "b"], [None, None], p_no=[0.9, 0.8]),  # replies that parse as nothing
        Correction("p", "sentence", ["b"], ["a", "b"], [None, None], p_no=[0.2, 0.9]),
        Correction("p", "fact", ["x"], ["a", "b"], [None, None], p_no=[0.1, None]),  # neither word in the top-K
    ]
    rows = table3_p_no(jobs)
    assert rows["baseline"] == {
        "factual": 0.0,
        "factual_change_percent": None,
        "non-factual": 1.0,
        "non-factual_change_percent": None,
    }
    assert rows["sentence"]["factual"] == 0.5 and rows["sentence"]["non-factual_change_percent"] == -50.0
    assert rows["fact"]["factual"] == 1.0 and "refused" not in rows["fact"]
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
