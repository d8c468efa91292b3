"""Build the claims artifact from the data set's claims, the sentences, or the extractor LLM."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hallulab.artifacts.claims import SOURCES, Claim
from hallulab.artifacts.claims.alignment import align_claim, words
from hallulab.artifacts.claims.parsing import parse_claims
from hallulab.artifacts.sentences import spans_by_record
from hallulab.core.config import ConfigError
from hallulab.data.schema import Record
from hallulab.llm.base import DecodingParams
from hallulab.pipeline.context import BuildContext


def _sentence_words(record: Record, spans: list[tuple[int, int] | None]) -> list[list[Any]]:
    response = record.response or ""
    out = []
    for span in spans:
        out.append([] if span is None else words(response[span[0] : span[1]], span[0]))
    return out


def build(ctx: BuildContext) -> dict[str, Any]:
    source = ctx.params.get("claims.source")
    if source not in SOURCES:
        raise ConfigError(f"claims.source: {source!r} is not one of {list(SOURCES)}")
    spans = spans_by_record(ctx.artifacts["sentences"])
    records = [p for p in ctx.records if p.response is not None]
    counts: Counter[str] = Counter()
    found: dict[str, list[Claim]] = {}
    llm_records = records if source == "llm" else []
    extracted = _extract(ctx, llm_records, counts) if llm_records else {}
    for record in records:
        sentence_words = _sentence_words(record, spans[record.id])
        texts: list[tuple[str, int | None]]
        if source == "llm":
            texts = list(extracted[record.id])
            kind = "llm"
        elif source == "given" or (source == "auto" and record.claims):
            texts = [(c.text, c.sentence_index) for c in record.claims]
            kind = "given"
            if source == "given" and not record.claims:
                counts["records_without_given_claims"] += 1
        else:
            texts = [(s, i) for i, s in enumerate(record.sentences)]
            kind = "sentence"
        claims = []
        for index, (text, sentence_index) in enumerate(texts):
            if kind == "sentence":
                span = spans[record.id][index]
                claims.append(Claim(index, text, index, kind, (span,) if span else ()))
                counts["claims_unaligned"] += span is None
                continue
            chosen, alignment = align_claim(text, sentence_words, sentence_index)
            if not alignment.aligned:
                counts["claims_unaligned"] += 1
            counts["words_unmatched"] += len(alignment.unmatched_words)
            claims.append(
                Claim(
                    index,
                    text,
                    chosen,
                    kind,
                    alignment.spans if alignment.aligned else (),
                    alignment.unmatched_words,
                )
            )
        counts[f"claims_{kind}"] += len(claims)
        counts["records_without_claims"] += not claims
        found[record.id] = claims
    extractor = ctx.resources.llm_name("extractor") if llm_records else None
    ctx.log.info("claims (%s): %s", source, dict(counts))
    return {
        "source": source,
        "extractor": extractor,
        "substitute": source in ("sentence", "auto") and counts["claims_sentence"] > 0,
        "claims": {rid: [c.to_dict() for c in claims] for rid, claims in found.items()},
        "diagnostics": dict(counts),
    }


def _extract(ctx: BuildContext, records: list[Record], counts: Counter[str]) -> dict[str, list[tuple[str, int]]]:
    """Every sentence through the extractor role; claims per record as (text, sentence index)."""
    template = ctx.resources.prompt("claims.prompt")
    llm = ctx.resources.llm("extractor")
    params = DecodingParams(max_new_tokens=int(ctx.params.get("claims.max_new_tokens")), temperature=0.0)
    slots = [(p.id, i) for p in records for i in range(len(p.sentences))]
    prompts = [template.messages(sentence=p.sentences[i]) for p in records for i in range(len(p.sentences))]
    replies = llm.generate(prompts, params)
    out: dict[str, list[tuple[str, int]]] = {p.id: [] for p in records}
    for (rid, index), reply in zip(slots, replies, strict=True):
        parsed = parse_claims(reply.text)
        counts["extractor_replies"] += 1
        if parsed is None:
            counts["extractor_replies_unparseable"] += 1
            continue
        counts["sentences_without_claims_by_extractor"] += not parsed
        out[rid].extend((text, index) for text in parsed)
    return out
