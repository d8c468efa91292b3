"""What each scored unit *is*, for the page: its text, its label and the method's detail.

A unit-level score row (:mod:`hallulab.core.units`) names a unit by (record, level, index). The
page shows the unit itself, read from the artifact or raw score file that defined it:

==========  ===============================================================================
level       text and detail
==========  ===============================================================================
sentence    the response's sentence; its label when the data set labels sentences
claim       the claims artifact's claim (CCP, FactSelfCheck); the data set's label if given
fact        FactSelfCheck: the knowledge-graph triple (Section 3.1), in the order the
            aggregate step numbers them (every sentence's triples in turn);
            HalluCheck: the NER fact
response    the whole response; its label when the data set gives one
prompt      the prompt, its familiarity label, and per concept (Self-Familiarity, Section 3)
            the masked inference prompt and the constrained search's best guess
==========  ===============================================================================

Beside any unit, the details its method's aggregate step wrote for it
(``data/aggregated/<dataset>/<method>.details.parquet``: CCP's word-by-word CCP under the
variant's K and NLI context, HalluCheck's question and the decision path of Section 3 for every
regenerated answer); the page recomputes none of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from hallulab.artifacts.claims import claims_by_record
from hallulab.artifacts.knowledge_graphs import graphs_by_record
from hallulab.core.units import details_by_unit
from hallulab.data.schema import Passage

#: (variant, level, record, unit index) -> the unit's (name, value) details
UnitDetails = Mapping[tuple[str, str, str, int], tuple[tuple[str, str], ...]]


@dataclass(frozen=True)
class UnitView:
    """One unit as the page shows it: position, text, label (None: unlabelled) and details
    (name, value) pairs in the order they read best."""

    index: int
    sentence_index: int | None
    text: str
    label: float | None = None
    details: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class UnitCatalogue:
    """Every unit a run defined, by (method, level) then record (see the module docstring)."""

    passages: Mapping[str, Passage]
    claims: Mapping[str, Sequence[str]] = field(default_factory=dict)
    kg_facts: Mapping[str, Sequence[tuple[int, str]]] = field(default_factory=dict)
    hallucheck: Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]] = field(default_factory=dict)
    concepts: Mapping[str, Sequence[str]] = field(default_factory=dict)
    familiarity: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: method -> its aggregate step's per-unit details
    details: Mapping[str, UnitDetails] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        passages: Sequence[Passage],
        artifacts: Mapping[str, Mapping[str, Any]],
        raw: Mapping[str, Mapping[str, Any]],
        details: Mapping[str, pd.DataFrame] | None = None,
    ) -> UnitCatalogue:
        claims = (
            {rid: [c.text for c in found] for rid, found in claims_by_record(artifacts["claims"]).items()}
            if "claims" in artifacts
            else {}
        )
        kg_facts = (
            {
                rid: [(s, triple.text()) for s, kg in enumerate(graphs.sentence_kgs) for triple in kg]
                for rid, graphs in graphs_by_record(artifacts["knowledge_graphs"]).items()
            }
            if "knowledge_graphs" in artifacts
            else {}
        )
        concepts: dict[str, list[str]] = {}
        for rid, record in artifacts.get("concepts", {}).get("records", {}).items():
            processings = record.get("processings") or {}
            first: list[dict[str, Any]] = next(iter(processings.values()), [])
            concepts[rid] = [c["text"] for c in first]
        return cls(
            passages={p.id: p for p in passages},
            claims=claims,
            kg_facts=kg_facts,
            hallucheck=raw.get("hallucheck", {}).get("records", {}),
            concepts=concepts,
            familiarity=raw.get("self_familiarity", {}).get("concepts", {}),
            details={method: details_by_unit(frame) for method, frame in (details or {}).items() if len(frame)},
        )

    def unit(self, method: str, variant: str, level: str, record_id: str, index: int) -> UnitView:
        """The unit ``index`` of ``level`` in ``record_id`` as ``method``'s ``variant`` scored it,
        with the details the method wrote for it."""
        view = self._unit(method, variant, level, record_id, index)
        found = self.details.get(method, {}).get((variant, level, record_id, index))
        return replace(view, details=view.details + found) if found else view

    def _unit(self, method: str, variant: str, level: str, record_id: str, index: int) -> UnitView:
        passage = self.passages.get(record_id)
        if passage is None:
            return UnitView(index, None, f"(record {record_id} is not among the generated records)")
        if level == "sentence":
            label = passage.labels[index] if passage.labels is not None and index < len(passage.labels) else None
            text = passage.sentences[index] if index < len(passage.sentences) else "(no such sentence)"
            return UnitView(index, index, text, label)
        if level == "response":
            return UnitView(index, None, "the whole response", passage.response_label)
        if level == "prompt":
            return self._prompt(passage, index)
        if level == "claim":
            return self._claim(passage, index)
        if level == "fact" and method == "hallucheck":
            return self._ner_fact(record_id, variant, index)
        if level == "fact":
            facts = self.kg_facts.get(record_id, [])
            if index < len(facts):
                sentence, text = facts[index]
                return UnitView(index, sentence, text)
        return UnitView(index, None, f"({level} {index})")

    def _claim(self, passage: Passage, index: int) -> UnitView:
        texts = self.claims.get(passage.id) or [c.text for c in passage.claims]
        given = passage.claims[index] if index < len(passage.claims) else None
        text = texts[index] if index < len(texts) else (given.text if given else f"(claim {index})")
        return UnitView(index, given.sentence_index if given else None, text, given.label if given else None)

    def _prompt(self, passage: Passage, index: int) -> UnitView:
        details: list[tuple[str, str]] = []
        for concept in self.concepts.get(passage.id, []):
            found = self.familiarity.get(concept)
            if not found:
                details.append((concept, "(no explanation stored)"))
                continue
            hypotheses = found.get("hypotheses") or []
            best = hypotheses[0]["text"] if hypotheses else "(no guess)"
            details.append((f"{concept}: masked inference prompt", str(found.get("masked", ""))))
            details.append((f"{concept}: best guess", str(best)))
        return UnitView(index, None, passage.prompt or "(no prompt)", passage.prompt_label, tuple(details))

    def _ner_fact(self, record_id: str, variant: str, index: int) -> UnitView:
        tagging = variant.split("_")[1] if variant.count("_") >= 2 else "ner"
        entries = self.hallucheck.get(record_id, {}).get(tagging, [])
        entry = next((e for e in entries if e.get("index") == index), None)
        if entry is None:
            return UnitView(index, None, f"(fact {index})")
        return UnitView(index, entry.get("sentence_index"), str(entry["text"]))
