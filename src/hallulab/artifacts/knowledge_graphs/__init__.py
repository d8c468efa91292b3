"""Knowledge graphs of every response and sample for FactSelfCheck (Sawczyn et al., §3.3).

Steps (Eq. 1-6): the entities E_p and the relation types R_p of the response p; the triples
KG_u of each sentence u, with p as context and E_p, R_p shown as guidance but not enforced (the
paper's footnote 3; the released code parses sentence triples without allowed sets, and a
triple with a new head, tail or relation is kept and counted); the allowed sets of the
samples, E_S = E_p plus every head and tail of the KG_u, R_S = R_p plus every relation of the
KG_u (Eq. 4-5); the triples KG_s of each sample s, restricted to E_S and R_S.

Extractors (params ``knowledge_graphs.extractor``):

* ``llm``: the ``extractor`` LLM role with the paper's prompt style (files under
  ``conf/prompts/``: entities and relation types as JSON, triples as ``subject;relation;object``
  CSV lines). Every malformed reply, malformed line and sample triple outside E_S / R_S is
  counted; such sample triples are dropped (as the released code does);
* ``spacy``: an offline **substitute** that needs no capable LLM: entities are spaCy's named
  entities and noun chunks, relations the verb lemmas (with a particle or preposition), and
  triples subject-verb-object patterns of the dependency parse (``nsubj`` / ``nsubjpass``
  with ``dobj``, ``attr``, ``acomp`` or a prepositional object); a personal pronoun subject
  stands for the response's first PERSON entity (no coreference model installs offline).

Claims given by the data set (FactualBio's labelled atomic facts) are facts of the response
in natural language; each is broken into triples the way a sentence is (``claim_kgs``, its
heads, tails and relations join the samples' allowed sets), so every FactSelfCheck variant
scores a given claim through its triples (the claim level that human fact labels evaluate).

Triples are normalised as the released code does (strip, lower case, spaces to ``_``), so the
KG-frequency score (Eq. 7) is exact-match counting. Table 8's statistics (entities and
relations per passage, facts per sentence, share of sentences without facts) are written in
the diagnostics. Stored JSON: ``{"extractor", "records": {record: {"entities", "relations",
"sentence_kgs": [[triple, ...] per sentence], "sample_kgs": [[triple, ...] per sample],
"claim_kgs": [[triple, ...] per given claim]}},
"diagnostics", "table8", "llm_calls"}`` with a triple as ``[head, relation, tail]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hallulab.pipeline.spec import ArtifactSpec, StepInputs, unplanned
from hallulab.pipeline.unit_texts import DescribedUnit, StoredFiles, UnitTexts

EXTRACTORS = ("llm", "spacy")


def normalise(text: str) -> str:
    """The released code's normalisation: strip, lower case, spaces to underscores."""
    return "_".join(text.strip().lower().split())


@dataclass(frozen=True, order=True)
class Triple:
    """A fact (head, relation, tail), normalised; a value, so sets and counts are one line."""

    head: str
    relation: str
    tail: str

    @classmethod
    def of(cls, head: str, relation: str, tail: str) -> Triple:
        return cls(normalise(head), normalise(relation), normalise(tail))

    def to_list(self) -> list[str]:
        return [self.head, self.relation, self.tail]

    def text(self) -> str:
        """As the prompts show a fact: (head, relation, tail) with spaces back."""
        return f"({self.head.replace('_', ' ')}, {self.relation.replace('_', ' ')}, {self.tail.replace('_', ' ')})"


@dataclass(frozen=True)
class RecordGraphs:
    entities: tuple[str, ...]
    relations: tuple[str, ...]
    sentence_kgs: tuple[tuple[Triple, ...], ...]
    sample_kgs: tuple[tuple[Triple, ...], ...]
    claim_kgs: tuple[tuple[Triple, ...], ...] = ()

    @property
    def passage_kg(self) -> list[Triple]:
        """KG_p: every sentence's triples, then every given claim's, each once, in order of
        first appearance."""
        return list(dict.fromkeys(t for kg in (*self.sentence_kgs, *self.claim_kgs) for t in kg))


def _triples(raw: Iterable[Iterable[str]]) -> tuple[Triple, ...]:
    return tuple(Triple(*(str(x) for x in t)) for t in raw)


def graphs_by_record(raw: Mapping[str, Any]) -> dict[str, RecordGraphs]:
    return {
        rid: RecordGraphs(
            tuple(r["entities"]),
            tuple(r["relations"]),
            tuple(_triples(kg) for kg in r["sentence_kgs"]),
            tuple(_triples(kg) for kg in r["sample_kgs"]),
            tuple(_triples(kg) for kg in r.get("claim_kgs", [])),
        )
        for rid, r in raw["records"].items()
    }


def fact_units(files: StoredFiles) -> Iterator[DescribedUnit]:
    """Every response's triples as fact-level units (the report page's fact texts), numbered as
    the aggregate step numbers them: every sentence's triples in turn, each shown as the prompts
    show a fact, in the sentence it was extracted from."""
    for record_id, graphs in graphs_by_record(files.own).items():
        triples = [(sentence, triple) for sentence, kg in enumerate(graphs.sentence_kgs) for triple in kg]
        for index, (sentence, triple) in enumerate(triples):
            yield DescribedUnit(record_id, index, triple.text(), sentence)


SPEC = ArtifactSpec(
    name="knowledge_graphs",
    description="knowledge-graph triples of every response sentence and every sample",
    inputs=StepInputs(
        params=("knowledge_graphs.extractor", "knowledge_graphs.max_new_tokens", "spacy"),
        llm_roles=("extractor",),
        prompts=(
            "knowledge_graphs.prompts.entities",
            "knowledge_graphs.prompts.relations",
            "knowledge_graphs.prompts.sentence_triples",
            "knowledge_graphs.prompts.sample_triples",
        ),
    ),
    requires=("sentences",),
    calls=unplanned("its triples come from an LLM's extraction of each sentence and sample"),
    units=UnitTexts("fact", read=fact_units),
)
