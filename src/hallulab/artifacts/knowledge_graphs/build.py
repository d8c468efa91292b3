"""Build the knowledge graphs of every response and sample (Eq. 1-6)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from hallulab.artifacts.knowledge_graphs import EXTRACTORS, Triple, normalise
from hallulab.artifacts.knowledge_graphs.parsing import parse_json_list, parse_triples
from hallulab.artifacts.knowledge_graphs.spacy_extractor import entities_and_relations, topic_of, triples_of
from hallulab.core.config import ConfigError
from hallulab.data.schema import Record
from hallulab.llm.base import DecodingParams
from hallulab.pipeline.context import BuildContext


def _record(
    entities: Sequence[str], relations: Sequence[str], sentences: Any, samples: Any, claims: Any
) -> dict[str, Any]:
    return {
        "entities": list(entities),
        "relations": list(relations),
        "sentence_kgs": [[t.to_list() for t in kg] for kg in sentences],
        "sample_kgs": [[t.to_list() for t in kg] for kg in samples],
        "claim_kgs": [[t.to_list() for t in kg] for kg in claims],
    }


def _allowed(
    entities: Sequence[str], relations: Sequence[str], sentence_kgs: Sequence[Sequence[Triple]]
) -> tuple[list[str], list[str]]:
    """E_S and R_S (Eq. 4-5)."""
    heads_tails = [x.replace("_", " ") for kg in sentence_kgs for t in kg for x in (t.head, t.tail)]
    rels = [t.relation.replace("_", " ") for kg in sentence_kgs for t in kg]
    return list(dict.fromkeys([*entities, *heads_tails])), list(dict.fromkeys([*relations, *rels]))


def _table8(records: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Statistics of the intermediate steps (the paper's Table 8; facts per given claim too
    where the data set gives claims)."""
    columns = {
        "entities_per_passage": [len(r["entities"]) for r in records.values()],
        "relations_per_passage": [len(r["relations"]) for r in records.values()],
        "facts_per_sentence": [len(kg) for r in records.values() for kg in r["sentence_kgs"]],
    }
    per_claim = [len(kg) for r in records.values() for kg in r["claim_kgs"]]
    if per_claim:
        columns["facts_per_claim"] = per_claim
    out = {}
    for name, values in columns.items():
        array = np.asarray(values or [0], dtype=np.float64)
        zeros = int((array == 0).sum()) if values else 0
        out[name] = {
            "mean": round(float(array.mean()), 2),
            "min": float(array.min()),
            "max": float(array.max()),
            "zero_count": zeros,
            "zero_percent": round(100.0 * zeros / max(len(values), 1), 2),
        }
    return out


def build(ctx: BuildContext) -> dict[str, Any]:
    extractor = ctx.params.get("knowledge_graphs.extractor")
    if extractor not in EXTRACTORS:
        raise ConfigError(f"knowledge_graphs.extractor: {extractor!r} is not one of {list(EXTRACTORS)}")
    records = [p for p in ctx.records if p.response is not None]
    counts: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    by_record = _spacy(ctx, records, counts) if extractor == "spacy" else _llm(ctx, records, counts, calls)
    ctx.log.info("knowledge graphs (%s): %s", extractor, dict(counts))
    return {
        "extractor": extractor,
        "extractor_llm": ctx.resources.llm_name("extractor") if extractor == "llm" else None,
        "substitute": extractor == "spacy",
        "records": by_record,
        "diagnostics": dict(counts),
        "table8": _table8(by_record),
        "llm_calls": dict(calls),
    }


def _spacy(ctx: BuildContext, records: Sequence[Record], counts: Counter[str]) -> dict[str, dict[str, Any]]:
    nlp = ctx.resources.spacy.full_nlp
    ctx.resources.spacy.require_fits(
        (p.id, field, text)
        for p in records
        for field, text in [("response", p.response or ""), *((f"samples[{i}]", s) for i, s in enumerate(p.samples))]
    )
    texts = [t for p in records for t in (p.response or "", *p.sentences, *(c.text for c in p.claims), *p.samples)]
    docs = iter(nlp.pipe(texts, batch_size=32))
    by_record = {}
    for record in records:
        response_doc = next(docs)
        topic = topic_of(response_doc)
        sentence_kgs = [triples_of(next(docs), topic) for _ in record.sentences]
        claim_kgs = [triples_of(next(docs), topic) for _ in record.claims]
        entities, relations = entities_and_relations(response_doc, [t for kg in sentence_kgs for t in kg])
        allowed_entities, allowed_relations = _allowed(entities, relations, [*sentence_kgs, *claim_kgs])
        allowed = (
            {e.lower().replace(" ", "_") for e in allowed_entities},
            {r.replace(" ", "_") for r in allowed_relations},
        )
        sample_kgs = []
        for _ in record.samples:
            found = triples_of(next(docs), topic)
            kept = [t for t in found if t.head in allowed[0] and t.tail in allowed[0] and t.relation in allowed[1]]
            counts["sample_triples_outside_allowed_sets"] += len(found) - len(kept)
            counts["samples_without_triples"] += not kept
            sample_kgs.append(kept)
        counts["sentences_without_triples"] += sum(not kg for kg in sentence_kgs)
        counts["claims_without_triples"] += sum(not kg for kg in claim_kgs)
        by_record[record.id] = _record(entities, relations, sentence_kgs, sample_kgs, claim_kgs)
    return by_record


def sentence_graphs(
    record: Record, entities: Sequence[str], relations: Sequence[str], replies: Iterator[str], counts: Counter[str]
) -> tuple[list[list[Triple]], list[list[Triple]], tuple[list[str], list[str]]]:
    """KG_u of every sentence, then of every given claim, from the extractor's replies (Eq. 3),
    and the samples' allowed sets E_S, R_S (Eq. 4-5).

    E_p and R_p are shown to the extractor as guidance, but a sentence triple is *not*
    restricted to them (the paper's footnote 3; the released code parses sentence triples
    without allowed sets): a triple with a new head, tail or relation is kept, and its parts
    extend E_S and R_S, so a sample can state the same fact. Such triples are counted
    (``sentence_triples_extending_sets``)."""
    known_entities = {normalise(e) for e in entities}
    known_relations = {normalise(r) for r in relations}
    sentence_kgs = [parse_triples(next(replies), None, None, counts) for _ in record.sentences]
    claim_kgs = [parse_triples(next(replies), None, None, counts) for _ in record.claims]
    for kg in (*sentence_kgs, *claim_kgs):
        counts["sentence_triples_extending_sets"] += sum(
            t.head not in known_entities or t.tail not in known_entities or t.relation not in known_relations
            for t in kg
        )
    counts["sentences_without_triples"] += sum(not kg for kg in sentence_kgs)
    counts["claims_without_triples"] += sum(not kg for kg in claim_kgs)
    return sentence_kgs, claim_kgs, _allowed(entities, relations, [*sentence_kgs, *claim_kgs])


def _llm(
    ctx: BuildContext, records: Sequence[Record], counts: Counter[str], calls: Counter[str]
) -> dict[str, dict[str, Any]]:
    llm = ctx.resources.llm("extractor")
    prompts = {
        name: ctx.resources.prompt(f"knowledge_graphs.prompts.{name}")
        for name in ("entities", "relations", "sentence_triples", "sample_triples")
    }
    params = DecodingParams(max_new_tokens=int(ctx.params.get("knowledge_graphs.max_new_tokens")), temperature=0.0)

    def ask(name: str, rows: list[dict[str, str]]) -> list[str]:
        calls[name] += len(rows)
        return [g.text for g in llm.generate([prompts[name].messages(**row) for row in rows], params)] if rows else []

    entities = []
    for reply in ask("entities", [{"text": p.response or ""} for p in records]):
        found = parse_json_list(reply, "entities")
        counts["entity_replies_malformed"] += found is None
        entities.append(found or [])
    relation_rows = [
        {"text": p.response or "", "entities": json.dumps(e, ensure_ascii=False)}
        for p, e in zip(records, entities, strict=True)
    ]
    relations = []
    for reply in ask("relations", relation_rows):
        found = parse_json_list(reply, "relationship_types")
        counts["relation_replies_malformed"] += found is None
        relations.append(found or [])
    sentence_rows, owners = [], []
    for record, ents, rels in zip(records, entities, relations, strict=True):
        # a given claim is broken into triples the way a sentence is (same prompt and context)
        for sentence in (*record.sentences, *(c.text for c in record.claims)):
            sentence_rows.append(
                {
                    "sentence": sentence,
                    "text": record.response or "",
                    "entities": json.dumps(ents, ensure_ascii=False),
                    "relations": json.dumps(rels, ensure_ascii=False),
                }
            )
            owners.append(record.id)
    sentence_replies = iter(ask("sentence_triples", sentence_rows))
    by_record = {}
    sample_rows, sample_owners, allowed_sets = [], [], {}
    for record, ents, rels in zip(records, entities, relations, strict=True):
        sentence_kgs, claim_kgs, (allowed_entities, allowed_relations) = sentence_graphs(
            record, ents, rels, sentence_replies, counts
        )
        allowed_sets[record.id] = (allowed_entities, allowed_relations)
        by_record[record.id] = _record(ents, rels, sentence_kgs, [], claim_kgs)
        for sample in record.samples:
            sample_rows.append(
                {
                    "text": sample,
                    "entities": json.dumps(allowed_entities, ensure_ascii=False),
                    "relations": json.dumps(allowed_relations, ensure_ascii=False),
                }
            )
            sample_owners.append(record.id)
    for owner, reply in zip(sample_owners, ask("sample_triples", sample_rows), strict=True):
        allowed_entities, allowed_relations = allowed_sets[owner]
        kg = parse_triples(reply, allowed_entities, allowed_relations, counts)
        counts["samples_without_triples"] += not kg
        by_record[owner]["sample_kgs"].append([t.to_list() for t in kg])
    return by_record
