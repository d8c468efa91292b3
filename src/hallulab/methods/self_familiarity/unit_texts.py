"""Self-Familiarity's prompts as the report page shows them: what the model made of each concept.

A prompt-level unit is the prompt itself (the records give its text and familiarity label);
beside it the page shows, for each concept of the prompt (the shared ``concepts`` artifact, in
the first processing it stores: ``full``, most important first), the masked inference prompt
(Eq. 3) and the constrained search's best guess of what it is related to (Eq. 4-5), read
from the stored raw scores.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hallulab.artifacts.concepts import Concept
from hallulab.methods.self_familiarity.raw import ConceptSearch, SelfFamiliarityScores
from hallulab.pipeline.unit_texts import DescribedUnit, StoredFiles, UnitTexts

CONCEPTS = "concepts"  # the artifact that names each prompt's concepts


def concept_details(concept: str, search: ConceptSearch | None) -> list[tuple[str, str]]:
    """One concept's (name, value) details: its masked inference prompt and best guess."""
    if not search:
        return [(concept, "(no explanation stored)")]
    hypotheses = search.get("hypotheses") or []
    best = hypotheses[0]["text"] if hypotheses else "(no guess)"
    return [(f"{concept}: masked inference prompt", str(search.get("masked", ""))), (f"{concept}: best guess", best)]


def prompt_units(files: StoredFiles) -> Iterator[DescribedUnit]:
    """Every prompt with concepts (none without the concepts artifact): its concepts' details."""
    if CONCEPTS not in files.artifacts:
        return
    raw = SelfFamiliarityScores.from_dict(files.own, files.where)
    for record_id, record in files.artifacts[CONCEPTS]["records"].items():
        processings: Mapping[str, list[Mapping[str, Any]]] = record.get("processings") or {}
        first = next(iter(processings.values()), [])
        names = [Concept.from_dict(concept).text for concept in first]
        details = [pair for name in names for pair in concept_details(name, raw.concepts.get(name))]
        yield DescribedUnit(record_id, 0, details=tuple(details))


UNIT_TEXTS = UnitTexts("prompt", read=prompt_units, reads=(CONCEPTS,))
