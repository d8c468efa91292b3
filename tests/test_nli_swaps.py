"""Entity-swap contrast pairs (hallulab.nli.swaps): one entity of the sentence changes to
another value of its type, the premise states the original and never the new value, the
entailment twin shares the premise, the subject is never swapped, the draw is seeded."""

from __future__ import annotations

import random

import pytest

from hallulab.nli.pairs import FeverClaim
from hallulab.nli.passages import FeverTopics, PassageShape
from hallulab.nli.swaps import EntitySpan, SwapShape, shifted_value, swap_examples, swap_pairs, tag_entities

_PAGES = {
    "Maria Lopez": [
        "Maria Lopez was born in Madrid in 1961 and studied law at the University of Salamanca.",
        "She joined the Spanish Socialist Workers' Party in 1982.",
        "Maria Lopez served as mayor of Toledo from 1995 to 2003.",
        "Her second novel was translated into French and German.",
    ],
    "Tom Becker": [
        "Tom Becker played 212 matches for Bayern Munich between 1970 and 1979.",
        "He was born in Hamburg and later coached Werder Bremen.",
        "Tom Becker won the European Cup three times with his club.",
        "He retired in Austria after a knee injury in 1981.",
    ],
}


def _claims() -> list[FeverClaim]:
    claims = []
    for subject, sentences in _PAGES.items():
        for i, sentence in enumerate(sentences):
            claims.append(FeverClaim(f"{subject} claim {i}.", "SUPPORTS", (sentence,)))
        claims.append(FeverClaim(f"{subject} refuted claim.", "REFUTES", (sentences[0],)))
    return claims


def _examples(seed: int = 0) -> list:
    return swap_examples(FeverTopics.of(_claims()), SwapShape(candidates=100), PassageShape(20, 40), seed=seed)


def test_each_swap_changes_one_entity_to_a_value_the_premise_never_states() -> None:
    examples = _examples()
    assert len(examples) >= 4  # most sentences have an entity other than the subject and a free value
    for example in examples:
        assert example.original in example.premise and example.swapped not in example.premise
        assert example.old_value in example.original and example.new_value != example.old_value
        assert example.swapped == example.original.replace(example.old_value, example.new_value, 1)
        assert example.new_value.casefold() not in example.premise.casefold()


def test_no_pages_subject_is_swapped_out_or_in() -> None:
    for seed in range(4):
        for example in _examples(seed):
            for subject in _PAGES:
                assert example.original.count(subject) == example.swapped.count(subject)


def test_twins_share_the_premise_and_differ_in_label() -> None:
    examples = _examples()
    contradictions = list(swap_pairs(examples, "contradiction"))
    entailments = list(swap_pairs(examples, "entailment"))
    assert [p.premise for p in contradictions] == [p.premise for p in entailments]
    assert {p.label for p in contradictions} == {"contradiction"}
    assert [p.hypothesis for p in entailments] == [e.original for e in examples]
    assert [p.hypothesis for p in contradictions] == [e.swapped for e in examples]
    with pytest.raises(ValueError, match="neutral"):
        list(swap_pairs(examples, "neutral"))


def test_the_draw_is_seeded() -> None:
    assert _examples(seed=3) == _examples(seed=3)
    assert _examples(seed=3) != _examples(seed=4)


def test_a_year_moves_within_the_shift_and_a_digit_count_grows() -> None:
    rng = random.Random(0)
    shape = SwapShape(max_year_shift=5)
    for _ in range(50):
        moved = shifted_value(EntitySpan(0, 13, "DATE", "March 3, 1961"), [], rng, shape)
        assert moved is not None and moved.startswith("March 3, ")
        assert 1 <= abs(int(moved[-4:]) - 1961) <= 5
        count = shifted_value(EntitySpan(0, 3, "CARDINAL", "212"), [], rng, shape)
        assert count is not None and int(count) > 212
    assert shifted_value(EntitySpan(0, 4, "DATE", "June"), ["May"], rng, shape) is None  # no year: left alone
    assert shifted_value(EntitySpan(0, 6, "GPE", "Madrid"), ["Madrid", "Lisbon"], rng, shape) == "Lisbon"
    assert shifted_value(EntitySpan(0, 6, "GPE", "Madrid"), ["madrid"], rng, shape) is None


def test_spacy_tags_the_facts_a_biography_states() -> None:
    (spans,) = tag_entities(["Tom Becker played 212 matches for Bayern Munich between 1970 and 1979."])
    labels = {span.text: span.label for span in spans}
    assert labels.get("Tom Becker") == "PERSON"
    assert labels.get("212") == "CARDINAL"
    assert any(span.label == "DATE" for span in spans)
