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
  Two kinds of label noise remain: an unannotated topic sentence may bear on the claim,
  and FEVER repeats some claim texts under other ids whose evidence is not left out
  (2.9% of the neutral passages hold an evidence sentence of a claim with the same text,
  counted over all of FEVER; excluding them is a change to the recipe, not made here).

The draw is seeded (``seed``), so the same data and seed give the same pairs.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

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
class _TopicIndex:
    by_sentence: dict[str, list[int]]
    by_subject: dict[str, list[int]]


def _topic_index(claims: Sequence[FeverClaim]) -> _TopicIndex:
    by_sentence: dict[str, list[int]] = defaultdict(list)
    by_subject: dict[str, list[int]] = defaultdict(list)
    for index, claim in enumerate(claims):
        for sentence in claim.evidence:
            by_sentence[sentence].append(index)
        key = subject_key(claim.claim)
        if key is not None:
            by_subject[key].append(index)
    return _TopicIndex(by_sentence, by_subject)


def _topic_sentences(index: int, claims: Sequence[FeverClaim], topics: _TopicIndex) -> list[str]:
    own = set(claims[index].evidence)
    key = subject_key(claims[index].claim)
    related = list(topics.by_subject[key]) if key is not None else []
    for sentence in claims[index].evidence:
        neighbours = topics.by_sentence[sentence]
        if len(neighbours) <= MAX_CLAIMS_PER_SENTENCE:
            related.extend(neighbours)
    seen: set[str] = set()
    topic: list[str] = []
    for other in related:
        for candidate in claims[other].evidence:
            if candidate not in own and candidate not in seen:
                seen.add(candidate)
                topic.append(candidate)
    return topic


def _words(sentences: Sequence[str]) -> int:
    return sum(len(s.split()) for s in sentences)


def _compose(
    required: Sequence[str], topic: list[str], filler: Sequence[str], shape: PassageShape, rng: random.Random
) -> str:
    """``required`` sentences at random positions among topic sentences (then filler),
    stopping once the drawn length is reached; the required ones are always kept."""
    target = rng.randint(shape.min_words, shape.max_words)
    extra: list[str] = []
    budget = target - _words(required)
    pool = list(topic)
    rng.shuffle(pool)
    used = set(required)
    for sentence in pool:
        if budget <= 0:
            break
        extra.append(sentence)
        used.add(sentence)
        budget -= len(sentence.split())
    tries = 0
    while budget > 0 and filler and tries < 50:
        tries += 1
        sentence = filler[rng.randrange(len(filler))]
        if sentence in used:
            continue
        extra.append(sentence)
        used.add(sentence)
        budget -= len(sentence.split())
    passage = list(extra)
    for sentence in required:
        passage.insert(rng.randint(0, len(passage)), sentence)
    return " ".join(passage)


def passage_pairs(
    claims: Sequence[FeverClaim], label: str, shape: PassageShape = PassageShape(), seed: int = 0
) -> Iterator[NLIPair]:
    """One passage-length pair of ``label`` per eligible claim: ``entailment`` (SUPPORTS
    claims) and ``contradiction`` (REFUTES claims) with the claim's evidence in the
    passage, ``neutral`` (any claim) without it; a neutral pair needs at least one topic
    sentence, so that its passage stays on the claim's subject."""
    verdicts = {verdict for verdict, name in EVIDENCE_LABELS.items() if name == label}
    if label != "neutral" and not verdicts:
        known = [*sorted(EVIDENCE_LABELS.values()), "neutral"]
        raise ValueError(f"passage pair label {label!r}: expected one of {known}")
    rng = random.Random(f"{seed}:{label}")
    topics = _topic_index(claims)
    filler = sorted(topics.by_sentence)
    for index, claim in enumerate(claims):
        if label != "neutral" and claim.verdict not in verdicts:
            continue
        topic = _topic_sentences(index, claims, topics)
        if label != "neutral":
            yield NLIPair(_compose(claim.evidence, topic, filler, shape, rng), claim.claim, label, "fever_passages")
        elif topic:
            yield NLIPair(_compose((), topic, filler, shape, rng), claim.claim, label, "fever_passages")
