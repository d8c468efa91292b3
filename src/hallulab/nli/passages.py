"""Passage-length NLI pairs built from FEVER's gold Wikipedia evidence.

SelfCheckGPT-NLI (Manakul et al., 2023, Sec. 5.3) reads one sentence against a whole
sampled passage, about 150-250 tokens, while MNLI, SNLI and SICK premises are a sentence
or two. A cross-encoder fine-tuned only on those never sees a premise of the length it is
used on. FEVER (Thorne et al., 2018) gives each claim the Wikipedia sentences that support
or refute it; here they become a passage-length premise:

* **topic sentences** of claim c: the gold evidence of the other claims about the same
  subject (the claim's leading capitalised words, "Andy Fletcher" in "Andy Fletcher is
  European."; FEVER wrote several claims per Wikipedia page, each opening with the page's
  subject) and of the claims that share an evidence sentence with c, minus c's own
  evidence; so a premise reads like the rest of the biography or article;
* **entailment / contradiction** (SUPPORTS / REFUTES): c's evidence placed at random
  positions among topic sentences, topped up to a drawn length of ``min_words`` to
  ``max_words`` words (other claims' evidence when the topic runs short);
* **neutral**: the same kind of passage *without* c's evidence. FEVER has no neutral
  pairs; these are the claim against on-topic text meant to neither state nor deny it.
  FEVER repeats some claim texts under other ids, so a claim's evidence here is the union
  of the gold evidence of every claim with its text, and none of it enters a neutral
  premise (neither as topic nor as filler). One kind of label noise remains: an
  unannotated topic sentence may still bear on the claim.

The draw is seeded (``seed``), so the same data and seed give the same pairs.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from hallulab.nli.pairs import EVIDENCE_LABELS, FeverClaim, NLIPair

#: a sentence shared by more claims than this is not used to find a claim's topic (FEVER has
#: a few evidence sentences cited by hundreds of claims on different pages)
MAX_CLAIMS_PER_SENTENCE = 40


@dataclass(frozen=True)
class PassageShape:
    """How long a built premise is, in whitespace words (drawn uniformly per pair)."""

    min_words: int = 80
    max_words: int = 200


#: opening words that name no subject on their own
_NOT_SUBJECTS = frozenset({"A", "An", "He", "In", "It", "On", "One", "She", "The", "There", "They", "This"})


def subject_key(claim: str) -> str | None:
    """The claim's leading run of capitalised (or numeric) words, its possessive dropped:
    ``"Nikolaj Coster-Waldau worked with Fox."`` -> ``"Nikolaj Coster-Waldau"``; None when
    the claim opens with a lower-case word or only with a word like "The"."""
    words: list[str] = []
    for word in claim.split():
        if not (word[0].isupper() or word[0].isdigit()):
            break
        words.append(word.rstrip(".,;:"))
        if word[-1] in ".,;:":
            break
    if words and words[-1].endswith("'s"):
        words[-1] = words[-1][:-2]
    key = " ".join(w for w in words if w)
    return key if key and key not in _NOT_SUBJECTS else None


@dataclass(frozen=True)
class FeverTopics:
    """A claim list indexed once for passage building: the claims citing each evidence
    sentence, the claims sharing a subject key, and the claims sharing a text. Build it
    with :meth:`of` and pass it to every :func:`passage_pairs` call over the same claims."""

    claims: Sequence[FeverClaim]
    by_sentence: dict[str, list[int]] = field(repr=False)
    by_subject: dict[str, list[int]] = field(repr=False)
    by_text: dict[str, list[int]] = field(repr=False)
    subjects: list[str | None] = field(repr=False)
    #: every evidence sentence, sorted: what tops a passage up when its topic runs short
    filler: list[str] = field(repr=False)

    @classmethod
    def of(cls, claims: Sequence[FeverClaim]) -> FeverTopics:
        by_sentence: dict[str, list[int]] = defaultdict(list)
        by_subject: dict[str, list[int]] = defaultdict(list)
        by_text: dict[str, list[int]] = defaultdict(list)
        subjects: list[str | None] = []
        for index, claim in enumerate(claims):
            for sentence in claim.evidence:
                by_sentence[sentence].append(index)
            key = subject_key(claim.claim)
            subjects.append(key)
            if key is not None:
                by_subject[key].append(index)
            by_text[claim.claim].append(index)
        return cls(claims, by_sentence, by_subject, by_text, subjects, sorted(by_sentence))

    def evidence_of_text(self, index: int) -> set[str]:
        """The gold evidence of every claim with claim ``index``'s text (itself included)."""
        return {s for other in self.by_text[self.claims[index].claim] for s in self.claims[other].evidence}

    def topic_sentences(self, index: int, excluded: set[str]) -> list[str]:
        """Evidence of the claims on claim ``index``'s subject or sharing one of its evidence
        sentences, in first-seen order, without ``excluded``."""
        claim = self.claims[index]
        key = self.subjects[index]
        related = list(self.by_subject[key]) if key is not None else []
        for sentence in claim.evidence:
            neighbours = self.by_sentence[sentence]
            if len(neighbours) <= MAX_CLAIMS_PER_SENTENCE:
                related.extend(neighbours)
        seen = set(excluded)
        topic: list[str] = []
        for other in related:
            for candidate in self.claims[other].evidence:
                if candidate not in seen:
                    seen.add(candidate)
                    topic.append(candidate)
        return topic


def _words(sentences: Sequence[str]) -> int:
    return sum(len(s.split()) for s in sentences)


def compose_passage(
    required: Sequence[str],
    topic: list[str],
    filler: Sequence[str],
    excluded: set[str],
    shape: PassageShape,
    rng: random.Random,
) -> str:
    """``required`` sentences at random positions among topic sentences (then filler),
    stopping once the drawn length is reached; the required ones are always kept and no
    sentence of ``excluded`` is drawn as filler."""
    target = rng.randint(shape.min_words, shape.max_words)
    passage: list[str] = []
    budget = target - _words(required)
    pool = list(topic)
    rng.shuffle(pool)
    used = set(required) | excluded
    for sentence in pool:
        if budget <= 0:
            break
        passage.append(sentence)
        used.add(sentence)
        budget -= len(sentence.split())
    tries = 0
    while budget > 0 and filler and tries < 50:
        tries += 1
        sentence = filler[rng.randrange(len(filler))]
        if sentence in used:
            continue
        passage.append(sentence)
        used.add(sentence)
        budget -= len(sentence.split())
    for sentence in required:
        passage.insert(rng.randint(0, len(passage)), sentence)
    return " ".join(passage)


def passage_pairs(
    topics: FeverTopics, label: str, shape: PassageShape = PassageShape(), seed: int = 0
) -> Iterator[NLIPair]:
    """One passage-length pair of ``label`` per eligible claim: ``entailment`` (SUPPORTS
    claims) and ``contradiction`` (REFUTES claims) with the claim's evidence in the
    passage, ``neutral`` (any claim) without it or any evidence of a claim with its text;
    a neutral pair needs at least one topic sentence, so that its passage stays on the
    claim's subject."""
    verdicts = {verdict for verdict, name in EVIDENCE_LABELS.items() if name == label}
    if label != "neutral" and not verdicts:
        known = [*sorted(EVIDENCE_LABELS.values()), "neutral"]
        raise ValueError(f"passage pair label {label!r}: expected one of {known}")
    rng = random.Random(f"{seed}:{label}")
    for index, claim in enumerate(topics.claims):
        if label != "neutral" and claim.verdict not in verdicts:
            continue
        excluded = topics.evidence_of_text(index)
        topic = topics.topic_sentences(index, excluded)
        if label == "neutral" and not topic:
            continue
        required = claim.evidence if label != "neutral" else ()
        premise = compose_passage(required, topic, topics.filler, excluded, shape, rng)
        yield NLIPair(premise, claim.claim, label, "fever_passages")
