"""Atomic facts of every response for HalluCheck (§3): spans of a sentence that carry a fact.

Tagging schemes (Table 4), all computed in one pass with spaCy's full pipeline:

* ``ner`` (the paper's default): the named entities of each sentence;
* ``pos``: maximal runs of tokens tagged NNP, NNPS, CD or RB (§6.1.3), a single preposition
  (IN) or punctuation mark between two of them joining the run ("University of Hull");
* ``random``: as many tokens of the sentence as it has entities, drawn at random (seeded per
  record and sentence) among its non-punctuation tokens (Table 4's control).

The paper resolves coreferences first; no coreference model installs offline, so facts are
taken from the sentences as written. Stored JSON: ``{"taggings", "facts": {record: {tagging:
[fact, ...]}}, "diagnostics"}``, a fact being ``{"index", "text", "sentence_index", "start",
"end"}`` (a character span in the response).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hallulab.pipeline.spec import ArtifactSpec, KnobSection, StepInputs

SPEC = ArtifactSpec(
    name="atomic_facts",
    description="atomic facts (NER, POS and random spans) of every response sentence",
    inputs=StepInputs(params=("spacy", "atomic_facts")),
    requires=("sentences",),
    knobs=(KnobSection("atomic_facts", "knobs:AtomicFactsKnobs"),),
)

TAGGINGS = ("ner", "pos", "random")
FACT_TAGS = frozenset({"NNP", "NNPS", "CD", "RB"})


@dataclass(frozen=True)
class AtomicFact:
    index: int
    text: str
    sentence_index: int
    start: int
    end: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "text": self.text,
            "sentence_index": self.sentence_index,
            "start": self.start,
            "end": self.end,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> AtomicFact:
        return cls(int(raw["index"]), str(raw["text"]), int(raw["sentence_index"]), int(raw["start"]), int(raw["end"]))


def facts_by_record(raw: Mapping[str, Any], tagging: str) -> dict[str, list[AtomicFact]]:
    return {rid: [AtomicFact.from_dict(f) for f in by_tag.get(tagging, [])] for rid, by_tag in raw["facts"].items()}
