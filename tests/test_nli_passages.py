"""Passage-length FEVER pairs (hallulab.nli.passages): the label follows whether the
claim's evidence is in the premise, premises have the drawn length, the draw is seeded."""

from __future__ import annotations

from collections import Counter

import pytest

from hallulab.data.loaders import data_root
from hallulab.nli.data import training_sources
from hallulab.nli.pairs import FeverClaim
from hallulab.nli.passages import FeverTopics, PassageShape, passage_pairs, subject_key
from tests.conftest import requires_wikibio


def _sentence(topic: str, i: int) -> str:
    return f"{topic} fact number {i} holds for this page ."  # 8 words


def _claims() -> list[FeverClaim]:
    """Two pages of ten claims; claims on a page share their first evidence sentence."""
    claims = []
    for page in ("Alpha", "Beta"):
        for i in range(10):
            verdict = "SUPPORTS" if i % 3 else "REFUTES"
            evidence = (_sentence(page, 0), _sentence(page, i + 1))
            claims.append(FeverClaim(f"{page} claim {i}.", verdict, evidence))
    return claims


@pytest.mark.parametrize("label", ["entailment", "contradiction"])
def test_evidence_pairs_hold_every_evidence_sentence(label: str) -> None:
    claims = _claims()
    verdict = {"entailment": "SUPPORTS", "contradiction": "REFUTES"}[label]
    pairs = list(passage_pairs(FeverTopics.of(claims), label, PassageShape(30, 60)))
    expected = [c for c in claims if c.verdict == verdict]
    assert [p.hypothesis for p in pairs] == [c.claim for c in expected]
    for pair, claim in zip(pairs, expected, strict=True):
        assert pair.label == label
        assert all(sentence in pair.premise for sentence in claim.evidence)
        assert len(pair.premise.split()) > len(" ".join(claim.evidence).split())  # topic sentences added


def test_neutral_pairs_leave_the_claims_evidence_out_and_stay_on_topic() -> None:
    claims = _claims()
    pairs = list(passage_pairs(FeverTopics.of(claims), "neutral", PassageShape(30, 40)))
    assert len(pairs) == len(claims)
    for pair, claim in zip(pairs, claims, strict=True):
        assert pair.label == "neutral"
        assert not any(sentence in pair.premise for sentence in claim.evidence)
        page = claim.claim.split()[0]
        # 30-40 words of 8-word sentences: the page's own 9 other sentences suffice
        assert pair.premise.count(page) == len(pair.premise.split()) // 8


def test_neutral_pairs_leave_out_the_evidence_of_a_repeated_claim_text() -> None:
    """FEVER repeats claim texts under other ids: the evidence of every claim with the
    text is the claim's own, kept out of its neutral premise as topic and as filler."""
    claims = _claims()
    repeat = FeverClaim(claims[4].claim, "SUPPORTS", (_sentence("Alpha", 42),))
    claims.append(repeat)
    topics = FeverTopics.of(claims)
    assert topics.evidence_of_text(4) == {*claims[4].evidence, *repeat.evidence}
    for shape in (PassageShape(30, 40), PassageShape(120, 160)):  # the longer draws filler too
        for seed in range(5):
            pairs = passage_pairs(topics, "neutral", shape, seed)
            premises = [p.premise for p in pairs if p.hypothesis == repeat.claim]
            assert len(premises) == 2  # the claim and its repeat
            assert not any(s in premise for premise in premises for s in topics.evidence_of_text(4))
    # another claim on the page still reads the repeat's sentence as topic
    assert repeat.evidence[0] in topics.topic_sentences(5, topics.evidence_of_text(5))


def test_premise_length_follows_the_shape() -> None:
    claims = _claims()
    for shape in (PassageShape(16, 24), PassageShape(40, 56)):
        lengths = [len(p.premise.split()) for p in passage_pairs(FeverTopics.of(claims), "neutral", shape)]
        # sentences are added while under the drawn length: at most one sentence over it
        assert all(shape.min_words <= n < shape.max_words + 8 for n in lengths), lengths


def test_the_draw_is_seeded() -> None:
    claims = _claims()
    first = list(passage_pairs(FeverTopics.of(claims), "entailment", seed=0))
    assert first == list(passage_pairs(FeverTopics.of(claims), "entailment", seed=0))
    assert first != list(passage_pairs(FeverTopics.of(claims), "entailment", seed=1))


def test_unknown_label_is_refused() -> None:
    with pytest.raises(ValueError, match="passage pair label 'supports'"):
        list(passage_pairs(FeverTopics.of(_claims()), "supports"))


@requires_wikibio  # same data root
def test_fever_passage_sources_on_the_real_data() -> None:
    root = data_root()
    assert root is not None
    sources = training_sources(root)
    counts = Counter(p.label for p in sources["fever_passages_contradiction"]())
    assert counts == {"contradiction": 29775 - 191}  # every REFUTES claim with evidence
    neutral = list(sources["fever_passages_neutral"]())
    assert 0.5 * 109135 < len(neutral) <= 109135  # claims whose topic has other sentences
    words = sorted(len(p.premise.split()) for p in neutral[:2000])
    assert 80 <= words[len(words) // 2] <= 200  # the default shape's range


@pytest.mark.parametrize(
    ("claim", "key"),
    [
        ("Nikolaj Coster-Waldau worked with the Fox Broadcasting Company.", "Nikolaj Coster-Waldau"),
        ("Adele's debut album sold well.", "Adele"),
        ("The Beatles were a band.", "The Beatles"),
        ("The film was released in 2016.", None),
        ("there is a river.", None),
    ],
)
def test_subject_key(claim: str, key: str | None) -> None:
    assert subject_key(claim) == key
