"""Build the concepts artifact: extraction (given / LLM / spaCy), then every processing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from hallulab.artifacts.concepts import PROCESSINGS
from hallulab.artifacts.concepts.knobs import ConceptsKnobs
from hallulab.artifacts.concepts.processing import WordRanks, process
from hallulab.core.errors import RecordError, UserFacingError
from hallulab.core.io import file_sha256
from hallulab.data.loaders import DATA_ROOT_ENV, data_root
from hallulab.data.schema import Record
from hallulab.llm.base import DecodingParams
from hallulab.pipeline.context import BuildContext

_LEADING = {"DET", "PRON", "PART", "ADP", "CCONJ", "SCONJ", "AUX", "PUNCT"}


class WordListError(ValueError, UserFacingError):
    """The configured frequency list cannot be read."""


def load_word_list(cfg: ConceptsKnobs) -> tuple[list[str], dict[str, Any]]:
    """The ranked word list and what identifies it."""
    root = data_root()
    path = root / cfg.word_list_file if root is not None else None
    use_file = cfg.word_list == "file" or (cfg.word_list == "auto" and path is not None and path.is_file())
    if use_file:
        if path is None or not path.is_file():
            raise WordListError(f"concepts.word_list=file: {cfg.word_list_file} not found under ${DATA_ROOT_ENV}")
        words = [
            line.strip()
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
            if line.strip() and not line.startswith("#!comment")
        ][: cfg.word_list_size]
        return words, {"name": cfg.word_list_file, "sha256": file_sha256(path), "size": len(words)}
    import wordfreq

    words = wordfreq.top_n_list("en", cfg.word_list_size)
    return words, {"name": "wordfreq top_n_list('en')", "size": len(words)}


def spacy_concepts(docs: Sequence[Any]) -> list[list[str]]:
    """Named entities and noun chunks of each prompt, leading function words dropped."""
    out = []
    for doc in docs:
        spans = sorted([*doc.ents, *doc.noun_chunks], key=lambda s: (s.start_char, -len(s.text)))
        found: list[str] = []
        for span in spans:
            tokens = list(span)
            while tokens and (tokens[0].pos_ in _LEADING or tokens[0].tag_ in {"WDT", "WP", "WP$", "WRB"}):
                tokens = tokens[1:]
            if not tokens or all(t.pos_ in _LEADING for t in tokens):
                continue
            text = doc.text[tokens[0].idx : tokens[-1].idx + len(tokens[-1].text)]
            if text and text not in found:
                found.append(text)
        out.append(found)
    return out


def parse_entity_list(reply: str) -> list[str]:
    """A comma-separated reply (first line that has text), numbering and quotes dropped."""
    for line in reply.splitlines():
        line = line.strip()
        if line:
            items = [item.strip().strip("\"'*.-").strip() for item in line.split(",")]
            return [item for item in items if item and item.lower() not in {"none", "n/a"}]
    return []


def _extract(ctx: BuildContext, cfg: ConceptsKnobs, records: list[Record], counts: Counter[str]) -> list[list[str]]:
    chosen: list[str] = []
    for record in records:
        source = auto_source(record) if cfg.source == "auto" else cfg.source
        if source == "given":
            given_concepts(record, source=cfg.source)
        chosen.append(source)
        counts[f"extracted_by_{source}"] += 1
    extracted: list[list[str]] = [[] for _ in records]
    spacy_rows = [i for i, s in enumerate(chosen) if s == "spacy"]
    if spacy_rows:
        docs = list(ctx.resources.spacy.full_nlp.pipe([records[i].prompt or "" for i in spacy_rows], batch_size=64))
        for i, found in zip(spacy_rows, spacy_concepts(docs), strict=True):
            extracted[i] = found
    llm_rows = [i for i, s in enumerate(chosen) if s == "llm"]
    if llm_rows:
        template = ctx.resources.prompt("concepts.prompt")
        prompts = [
            template.messages(domain=str(records[i].meta.get("domain", "general")), question=records[i].prompt or "")
            for i in llm_rows
        ]
        replies = ctx.resources.llm("extractor").generate(prompts, DecodingParams(max_new_tokens=cfg.max_new_tokens))
        for i, reply in zip(llm_rows, replies, strict=True):
            extracted[i] = parse_entity_list(reply.text)
            counts["llm_replies_without_entities"] += not extracted[i]
    for i, s in enumerate(chosen):
        if s == "given":
            extracted[i] = given_concepts(records[i], source=cfg.source)
    return extracted


def auto_source(record: Record) -> str:
    """``concepts.source=auto`` for one record: ``given`` when it has ``meta.concepts`` at all
    (absent, null and ``[]`` fall back to ``spacy``), so a malformed value, a bare string
    included, is refused by :func:`given_concepts` rather than silently replaced."""
    given = record.meta.get("concepts")
    return "spacy" if given is None or given == [] else "given"


def given_concepts(record: Record, source: str = "given") -> list[str]:
    """The record's own concepts (``meta.concepts``): a list of non-empty strings, else an error
    naming the record and the item (``[null, 42]`` must not become the concepts "None", "42");
    ``source`` is the ``concepts.source`` setting the error names (``given`` or ``auto``)."""
    given = record.meta.get("concepts")
    if not isinstance(given, list):
        raise RecordError(
            record.id,
            "meta.concepts",
            f"concepts.source={source} needs a list, got {type(given).__name__}: "
            'give a list of strings, e.g. ["quantum entanglement"]',
        )
    for index, concept in enumerate(given):
        if not isinstance(concept, str) or not concept.strip():
            raise RecordError(record.id, f"meta.concepts[{index}]", f"expected a non-empty string, got {concept!r}")
    return list(given)


def build(ctx: BuildContext) -> dict[str, Any]:
    cfg = ctx.params.typed(ConceptsKnobs, "concepts")
    words, word_list = load_word_list(cfg)
    ranks = WordRanks.from_words(words, cfg.word_rank)
    records = [p for p in ctx.records if p.prompt]
    counts: Counter[str] = Counter()
    counts["records_without_prompt"] = len(ctx.records) - len(records)
    by_record: dict[str, Any] = {}
    for record, extracted in zip(records, _extract(ctx, cfg, records, counts), strict=True):
        prompt = record.prompt or ""
        fallback = None
        if not extracted:
            extracted, fallback = [prompt], "instruction"  # Appendix E: recall the instruction itself
            counts["fallback_instruction_no_concept"] += 1
        processings: dict[str, list[dict[str, Any]]] = {}
        for name in PROCESSINGS:
            concepts, all_common = process(
                prompt,
                extracted,
                ranks,
                common_words=cfg.common_words,
                common_filter=cfg.common_filter,
                h=cfg.frequency_h,
                grouping=name != "no_grouping",
                filtering=name != "no_filtering",
                ranking=name != "no_ranking",
            )
            if name == "full" and all_common:
                fallback = fallback or "all_common_words"
                counts["fallback_unfiltered_all_common"] += 1
            processings[name] = [c.to_dict() for c in concepts]
        counts["concepts_full"] += len(processings["full"])
        by_record[record.id] = {"extracted": extracted, "fallback": fallback, "processings": processings}
    ctx.log.info("concepts: %s", dict(counts))
    return {"source": cfg.source, "word_list": word_list, "records": by_record, "diagnostics": dict(counts)}
