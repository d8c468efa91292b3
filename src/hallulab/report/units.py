"""What each scored unit *is*, for the page: its text, its label and the method's detail.

A unit-level score row (:mod:`hallulab.core.units`) names a unit by (record, level, index). The
page shows the unit itself, read from the artifact or raw score file that defined it:

==========  ===============================================================================
level       text and detail
==========  ===============================================================================
sentence    the response's sentence; its label when the data set labels sentences
claim       the claims artifact's claim (CCP, FactSelfCheck); the data set's label if given;
            CCP: each word of the claim with its CCP under the variant's K and NLI context
fact        FactSelfCheck: the knowledge-graph triple (Section 3.1), in the order the
            aggregate step numbers them (every sentence's triples in turn);
            HalluCheck: the NER fact, its question and every regenerated answer with the
            decision path of Section 3 (answer span, token F1 against the fact, the span
            steps the KS test finds uniform)
response    the whole response; its label when the data set gives one
prompt      the prompt, its familiarity label, and per concept (Self-Familiarity, Section 3)
            the masked explanation and the constrained search's best guess
==========  ===============================================================================
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hallulab.artifacts.claims import claims_by_record
from hallulab.artifacts.knowledge_graphs import graphs_by_record
from hallulab.artifacts.response_tokens import token_stats
from hallulab.data.schema import Passage
from hallulab.methods.ccp.aggregate import CCPKnobs, CCPMode, unit_log_ccps, variant_modes
from hallulab.methods.hallucheck.aggregate import HalluCheckKnobs
from hallulab.methods.hallucheck.checks import (
    alignment_f1,
    locate_answer,
    span_check_steps,
    step_is_uniform,
)
from hallulab.tokens import TokenStats


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
    hallucheck_knobs: HalluCheckKnobs = field(default_factory=HalluCheckKnobs)
    ccp_records: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    tokens: Mapping[str, Sequence[TokenStats]] = field(default_factory=dict)
    ccp_modes: Mapping[str, CCPMode] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        passages: Sequence[Passage],
        artifacts: Mapping[str, Mapping[str, Any]],
        raw: Mapping[str, Mapping[str, Any]],
        hallucheck_knobs: HalluCheckKnobs | None = None,
        ccp_knobs: CCPKnobs | None = None,
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
            hallucheck_knobs=hallucheck_knobs or HalluCheckKnobs(),
            ccp_records=raw.get("ccp", {}).get("records", {}),
            tokens=token_stats(artifacts["response_tokens"]) if "response_tokens" in artifacts else {},
            ccp_modes=variant_modes(ccp_knobs or CCPKnobs()),
        )

    def unit(self, method: str, variant: str, level: str, record_id: str, index: int) -> UnitView:
        """The unit ``index`` of ``level`` in ``record_id`` as ``method``'s ``variant`` scored it."""
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
            view = self._claim(passage, index)
            if method == "ccp" and variant in self.ccp_modes:
                return replace(view, details=self._ccp_words(record_id, variant, index))
            return view
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

    def _ccp_words(self, record_id: str, variant: str, index: int) -> tuple[tuple[str, str], ...]:
        """Each word of the claim with its CCP (Eq. 7 under the variant's K, context and word
        rule); the claim's score is 1 minus their product (the prod aggregation)."""
        entry = next((e for e in self.ccp_records.get(record_id, []) if e.get("index") == index), None)
        tokens = self.tokens.get(record_id)
        if entry is None or not tokens or not entry.get("units", {}).get("token"):
            return ()
        mode = self.ccp_modes[variant]
        words = unit_log_ccps(entry, tokens, mode.k, mode.context, mode.merge, mode.stopwords, mode.blank)
        return tuple(
            (f"word {i + 1}: {text.strip() or repr(text)}", f"CCP {math.exp(value):.3f}")
            for i, (text, value) in enumerate(words)
        )

    def _prompt(self, passage: Passage, index: int) -> UnitView:
        details: list[tuple[str, str]] = []
        for concept in self.concepts.get(passage.id, []):
            found = self.familiarity.get(concept)
            if not found:
                details.append((concept, "(no explanation stored)"))
                continue
            hypotheses = found.get("hypotheses") or []
            best = hypotheses[0]["text"] if hypotheses else "(no guess)"
            details.append((f"{concept}: masked explanation", str(found.get("masked", ""))))
            details.append((f"{concept}: best guess", str(best)))
        return UnitView(index, None, passage.prompt or "(no prompt)", passage.prompt_label, tuple(details))

    def _ner_fact(self, record_id: str, variant: str, index: int) -> UnitView:
        tagging = variant.split("_")[1] if variant.count("_") >= 2 else "ner"
        entries = self.hallucheck.get(record_id, {}).get(tagging, [])
        entry = next((e for e in entries if e.get("index") == index), None)
        if entry is None:
            return UnitView(index, None, f"(fact {index})")
        details: list[tuple[str, str]] = [("question", str(entry.get("question") or "(no question formed)"))]
        for key, answer in (entry.get("answers") or {}).items():
            details.extend(self._decision_path(entry["text"], key, answer))
        return UnitView(index, entry.get("sentence_index"), str(entry["text"]), None, tuple(details))

    def _decision_path(self, fact: str, key: str, answer: Mapping[str, Any]) -> list[tuple[str, str]]:
        """HalluCheck's checks on one regenerated answer, as the headline variant reads them: the
        span alignment reads, its whitespace-token F1 against the fact, and how many of the
        tested steps look guessed (KS test against the released reference)."""
        knobs = self.hallucheck_knobs
        steps: list[str] | None = answer.get("steps")
        located = locate_answer(steps, str(answer.get("text", "")), fact)
        reply, span, span_text = located.reply, located.span, located.span_text
        f1 = alignment_f1(span_text, fact)
        rows = [
            (f"{key}: answer", reply.strip() or "(empty)"),
            (
                f"{key}: alignment",
                f"span '{span_text}', token F1 {f1:.2f} "
                f"({'aligned' if f1 >= knobs.f1_threshold else 'not aligned'} at {knobs.f1_threshold:g})",
            ),
        ]
        tops = answer.get("top")
        if steps is not None and span is not None and tops:
            tested = span_check_steps(steps, span, min(knobs.ks_steps, len(tops)))
            uniform = sum(step_is_uniform(tops[i], knobs.ks_alpha) for i in tested.indices)
            rows.append(
                (
                    f"{key}: KS check",
                    f"{uniform} of {len(tested.indices)} tested steps uniform at α = {knobs.ks_alpha:g}"
                    + ("" if tested.verdict is None else f" (span {tested.outcome.replace('_', ' ')})"),
                )
            )
        return rows
