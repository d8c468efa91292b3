"""Concepts of every prompt for Self-Familiarity (§3.1, Eq. 1 and 6; Table 4's ablations).

Extraction (``concepts.source``):

* ``given``: the concepts the data set ships with the record (``meta.concepts``; Concept-7's
  entities were extracted by the paper's GPT-3.5 with the Figure 6 prompt);
* ``llm``: the ``extractor`` LLM role with the Figure 6 prompt (any backend);
* ``spacy``: spaCy's named entities and noun chunks of the prompt, leading determiners and
  pronouns dropped: an offline substitute for an LLM extractor (it also returns ordinary
  noun phrases, which the common-word filter then removes);
* ``auto``: ``given`` for a record whose ``meta.concepts`` is present and not an empty list
  (so a malformed value, a bare string included, is refused naming the record and the field,
  as with ``given``: give a list of strings, e.g. ``["quantum entanglement"]``); ``spacy``
  when the key is absent, null or ``[]``.

Processing (:mod:`hallulab.artifacts.concepts.processing`): grouping of adjacent concepts
that occur joined in the prompt, removal of concepts covered by another, filtering of
concepts made only of common words (the top ``common_words`` of the word list), ranking by
the frequency score f_i = prod_j exp(-p_ij / H) (rarest first). Every processing that
Table 4 ablates is stored: ``full``, ``no_grouping``, ``no_filtering``, ``no_ranking``
(prompt order), so the ablation variants need no second extraction.

Fallbacks (counted): a prompt whose concepts are all common words keeps its unfiltered
concepts; a prompt with no concept at all is checked on the instruction itself (the
instruction-recall setting of the paper's Appendix E).

Stored JSON: ``{"source", "word_list", "records": {id: {"extracted": [str], "fallback",
"processings": {name: [concept, ...]}}}, "diagnostics"}``; a concept is ``{"text",
"position", "log_frequency", "words"}`` with ``log_frequency`` = ln f_i.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hallulab.pipeline.spec import ArtifactSpec, KnobSection, StepInputs, unplanned

SPEC = ArtifactSpec(
    name="concepts",
    description="concepts of every prompt, grouped, filtered and ranked (Self-Familiarity §3.1)",
    inputs=StepInputs(
        params=("spacy", "concepts"),
        llm_roles=("extractor",),
        prompts=("concepts.prompt",),
        data_files=("word_list",),  # the word list under the data root
    ),
    calls=unplanned("its concepts come from the extractor LLM's replies, or from spaCy"),
    knobs=(KnobSection("concepts", "knobs:ConceptsKnobs"),),
)

SOURCES = ("auto", "given", "llm", "spacy")
PROCESSINGS = ("full", "no_grouping", "no_filtering", "no_ranking")


@dataclass(frozen=True)
class Concept:
    text: str
    position: int  # character offset in the prompt (len(prompt) + k when not found in it)
    log_frequency: float  # ln f_i = -sum_j p_ij / H
    words: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "position": self.position,
            "log_frequency": self.log_frequency,
            "words": list(self.words),
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Concept:
        return cls(str(raw["text"]), int(raw["position"]), float(raw["log_frequency"]), tuple(raw["words"]))


def concepts_by_record(raw: Mapping[str, Any], processing: str = "full") -> dict[str, list[Concept]]:
    """record id -> its concepts under one processing, most important first."""
    return {
        rid: [Concept.from_dict(c) for c in entry["processings"][processing]] for rid, entry in raw["records"].items()
    }
