"""Build the atomic-facts artifact with spaCy's full pipeline (entities and tags)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hallulab.artifacts.atomic_facts import AtomicFact
from hallulab.artifacts.atomic_facts.knobs import AtomicFactsKnobs
from hallulab.artifacts.atomic_facts.tagging import TaggedToken, pos_spans, random_spans
from hallulab.artifacts.sentences import spans_by_record
from hallulab.pipeline.context import BuildContext


def build(ctx: BuildContext) -> dict[str, Any]:
    cfg = ctx.params.typed(AtomicFactsKnobs, "atomic_facts")
    spans = spans_by_record(ctx.artifacts["sentences"])
    nlp = ctx.resources.spacy.full_nlp
    items = [
        (p, i, span)
        for p in ctx.records
        if p.response is not None
        for i, span in enumerate(spans[p.id])
        if span is not None
    ]
    ctx.resources.spacy.require_fits((p.id, "response", p.response or "") for p, _, _ in items)
    docs = nlp.pipe([(p.response or "")[a:b] for p, _, (a, b) in items], batch_size=64)
    facts: dict[str, dict[str, list[dict[str, Any]]]] = {}
    counts: Counter[str] = Counter()
    for (record, sentence_index, (start, _)), doc in zip(items, docs, strict=True):
        by_tag = facts.setdefault(record.id, {t: [] for t in cfg.taggings})
        tokens = [
            TaggedToken(t.text, t.tag_, start + t.idx, start + t.idx + len(t.text), t.is_punct, t.is_space) for t in doc
        ]
        entities = [(start + e.start_char, start + e.end_char) for e in doc.ents]
        found = {
            "ner": entities,
            "pos": pos_spans(tokens),
            "random": random_spans(tokens, len(entities), f"{cfg.seed}:{record.id}:{sentence_index}"),
        }
        response = record.response or ""
        for tagging in cfg.taggings:
            for a, b in found[tagging]:
                fact = AtomicFact(len(by_tag[tagging]), response[a:b], sentence_index, a, b)
                by_tag[tagging].append(fact.to_dict())
            counts[f"{tagging}_facts"] += len(found[tagging])
            counts[f"{tagging}_sentences_without_facts"] += not found[tagging]
    for record in ctx.records:
        if record.response is not None and record.id not in facts:
            facts[record.id] = {t: [] for t in cfg.taggings}
    for tagging in cfg.taggings:
        counts[f"{tagging}_records_without_facts"] = sum(not by_tag[tagging] for by_tag in facts.values())
    ctx.log.info("atomic facts: %s", dict(counts))
    return {"taggings": list(cfg.taggings), "facts": facts, "diagnostics": dict(counts)}
