"""Atomic claims of every response, aligned to the response's characters (shared artifact).

Sources (params ``claims.source``):

* ``given``: the claims the data set provides (FactualBio's facts), with their labels;
* ``sentence``: every sentence is one claim (an offline **substitute** that needs no capable
  LLM; labelled as such in every output);
* ``llm``: the ``extractor`` LLM role breaks each sentence into claims with the paper's
  prompt style (``conf/prompts/<claims.prompt>.yaml``: one sentence in, one claim a line out,
  lines starting with "- "); every reply that yields no claim line is counted;
* ``auto`` (default): ``given`` for records that carry claims, ``sentence`` for the others.

Each claim is aligned to the response through a character mask
(:mod:`hallulab.artifacts.claims.alignment`); unaligned claims and unmatched words are
counted. Stored JSON: ``{"source", "extractor", "claims": {record: [claim, ...]},
"diagnostics"}``, a claim being ``{"index", "text", "sentence_index", "source", "spans",
"unmatched_words"}`` (``spans``: character spans in the response; empty when unaligned).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hallulab.pipeline.spec import ArtifactSpec, StepInputs, unplanned
from hallulab.pipeline.unit_texts import DescribedUnit, StoredFiles, UnitTexts

SOURCES = ("auto", "given", "sentence", "llm")


@dataclass(frozen=True)
class Claim:
    """One claim of a record (see the module docstring)."""

    index: int
    text: str
    sentence_index: int | None
    source: str
    spans: tuple[tuple[int, int], ...]
    unmatched_words: tuple[str, ...] = ()

    @property
    def aligned(self) -> bool:
        return bool(self.spans)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "text": self.text,
            "sentence_index": self.sentence_index,
            "source": self.source,
            "spans": [list(s) for s in self.spans],
            "unmatched_words": list(self.unmatched_words),
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Claim:
        return cls(
            index=int(raw["index"]),
            text=str(raw["text"]),
            sentence_index=raw.get("sentence_index"),
            source=str(raw["source"]),
            spans=tuple((int(a), int(b)) for a, b in raw.get("spans", [])),
            unmatched_words=tuple(raw.get("unmatched_words", [])),
        )


def claims_by_record(raw: Mapping[str, Any]) -> dict[str, list[Claim]]:
    return {rid: [Claim.from_dict(c) for c in claims] for rid, claims in raw["claims"].items()}


def claim_units(files: StoredFiles) -> Iterator[DescribedUnit]:
    """Every record's claims as claim-level units (the report page's claim texts): the claim at
    position i of its record is the unit i a method that requires the artifact scores."""
    for record_id, claims in claims_by_record(files.own).items():
        for position, claim in enumerate(claims):
            yield DescribedUnit(record_id, position, claim.text, claim.sentence_index)


SPEC = ArtifactSpec(
    name="claims",
    description="atomic claims of every response with their character spans",
    inputs=StepInputs(
        params=("claims.source", "claims.max_new_tokens"),
        llm_roles=("extractor",),
        prompts=("claims.prompt",),
    ),
    requires=("sentences",),
    calls=unplanned("its claims come from the extractor LLM's replies, or from the data"),
    units=UnitTexts("claim", read=claim_units),
)
