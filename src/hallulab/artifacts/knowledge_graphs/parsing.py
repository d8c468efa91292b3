"""Reading the extractor's replies: JSON lists of entities / relation types, CSV triples."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable

from hallulab.artifacts.knowledge_graphs import Triple, normalise

_JSON_OBJECT = re.compile(r"\{.*\}", re.S)
_REFUSAL = re.compile(r"\b(i can(?:no|')t|i am unable|as an ai|sorry)\b", re.I)


def parse_json_list(reply: str, key: str) -> list[str] | None:
    """The strings under ``key`` in the first JSON object of the reply; None when there is no
    such object (malformed: counted by the caller)."""
    match = _JSON_OBJECT.search(reply)
    if match is None:
        return None
    try:
        payload = json.loads(match.group(0))
    except ValueError:
        return None
    values = payload.get(key) if isinstance(payload, dict) else None
    if not isinstance(values, list):
        return None
    return [str(v).strip() for v in values if str(v).strip()]


def parse_triples(
    reply: str, entities: Iterable[str] | None, relations: Iterable[str] | None, counts: Counter[str]
) -> list[Triple]:
    """``subject;relation;object`` lines (a header line is skipped); malformed lines, refused
    replies and triples outside the allowed sets (when given) are counted and left out."""
    if _REFUSAL.search(reply) and ";" not in reply:
        counts["replies_refused"] += 1
        return []
    allowed_entities = {normalise(e) for e in entities} if entities is not None else None
    allowed_relations = {normalise(r) for r in relations} if relations is not None else None
    found: list[Triple] = []
    for line in reply.splitlines():
        text = line.strip().strip("`").strip()
        if not text or text.lower().replace(" ", "") == "subject;relation;object":
            continue
        parts = [p.strip().strip('"') for p in text.split(";")]
        if len(parts) != 3 or not all(parts):
            counts["lines_malformed"] += 1
            continue
        triple = Triple.of(*parts)
        if allowed_entities is not None and (
            triple.head not in allowed_entities or triple.tail not in allowed_entities
        ):
            counts["triples_outside_entities"] += 1
            continue
        if allowed_relations is not None and triple.relation not in allowed_relations:
            counts["triples_outside_relations"] += 1
            continue
        found.append(triple)
    return list(dict.fromkeys(found))
