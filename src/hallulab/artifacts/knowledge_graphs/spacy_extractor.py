"""The offline substitute extractor: subject-verb-object triples from spaCy's parse.

For each verb with a subject (``nsubj`` / ``nsubjpass``): the relation is the verb's lemma
(with its particle, and with the preposition of a prepositional object: "born in" ->
``bear_in``), the tail each direct object, attribute, adjectival complement or prepositional
object. A head or tail is the named entity that contains the word when there is one, else its
compound-plus-noun phrase; a personal pronoun subject is the response's topic (its first
PERSON entity). Every phrase is normalised like the released code's triples, so identical
facts in different samples match exactly.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hallulab.artifacts.knowledge_graphs import Triple

SUBJECTS = {"nsubj", "nsubjpass"}
OBJECTS = {"dobj", "attr", "acomp", "oprd"}
PRONOUNS = {"he", "she", "they", "it", "his", "her", "him", "their"}


def _phrase(token: Any, topic: str | None) -> str | None:
    if token.lower_ in PRONOUNS:
        return topic
    if token.ent_type_:
        for entity in token.doc.ents:
            if entity.start <= token.i < entity.end:
                return str(entity.text)
    words = [t for t in token.lefts if t.dep_ in ("compound", "amod", "nummod", "poss") and t.lower_ not in PRONOUNS]
    return " ".join([*(w.text for w in words), token.text])


def _relation(verb: Any, preposition: Any | None = None) -> str:
    lemma = verb.lemma_
    particles = [t.text for t in verb.children if t.dep_ == "prt"]
    parts = [lemma, *particles]
    if preposition is not None:
        parts.append(preposition.text)
    return " ".join(parts)


def triples_of(doc: Any, topic: str | None) -> list[Triple]:
    """Subject-verb-object triples of one parsed text."""
    found: list[Triple] = []
    for verb in (t for t in doc if t.pos_ in ("VERB", "AUX")):
        subjects = [c for c in verb.children if c.dep_ in SUBJECTS]
        if not subjects:
            continue
        head = _phrase(subjects[0], topic)
        if not head:
            continue
        for child in verb.children:
            tails: list[tuple[Any, Any | None]] = []
            if child.dep_ in OBJECTS:
                tails.append((child, None))
            elif child.dep_ in ("prep", "agent"):
                tails.extend((pobj, child) for pobj in child.children if pobj.dep_ == "pobj")
            for tail_token, preposition in tails:
                tail = _phrase(tail_token, topic)
                if tail and tail.lower() != head.lower():
                    found.append(Triple.of(head, _relation(verb, preposition), tail))
    return list(dict.fromkeys(found))


def entities_and_relations(doc: Any, triples: Iterable[Triple]) -> tuple[list[str], list[str]]:
    """E_p and R_p of a response: its named entities and noun-chunk roots, the relations of its triples."""
    entities = [e.text for e in doc.ents] + [c.root.text for c in doc.noun_chunks if c.root.lower_ not in PRONOUNS]
    relations = [t.relation.replace("_", " ") for t in triples]
    return list(dict.fromkeys(entities)), list(dict.fromkeys(relations))


def topic_of(doc: Any) -> str | None:
    return next((e.text for e in doc.ents if e.label_ == "PERSON"), None)
