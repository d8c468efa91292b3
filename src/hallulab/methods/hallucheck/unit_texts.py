"""HalluCheck's facts as the report page shows them: each atomic fact its score step checked.

The fact-level units are the facts of one tagging (§3; Table 4's NER, POS or random spans), so
they differ by variant: a variant is named ``hallucheck_<tagging>_...``
(:func:`hallulab.methods.hallucheck.aggregate.variant_name`), and scores the facts of that
tagging. The texts are read from the stored raw scores (each fact with its sentence); the
question and the decision path of each fact are the details the aggregate step wrote.
"""

from __future__ import annotations

from collections.abc import Iterator

from hallulab.artifacts.atomic_facts import TAGGINGS
from hallulab.methods.hallucheck.raw import HalluCheckScores
from hallulab.pipeline.unit_texts import DescribedUnit, StoredFiles, UnitTexts


def tagging_of(variant: str) -> str:
    """The fact tagging ``variant`` scores: its name's second part (``hallucheck_ner_greedy``: ner);
    the paper's default, named entities, for a name that gives none."""
    parts = variant.split("_")
    return parts[1] if len(parts) >= 3 else TAGGINGS[0]


def fact_units(files: StoredFiles) -> Iterator[DescribedUnit]:
    """Every checked fact of every record and tagging: its text and sentence, in the set of its tagging."""
    raw = HalluCheckScores.from_dict(files.own, files.where)
    for record_id, by_tagging in raw.records.items():
        for tagging, facts in by_tagging.items():
            for fact in facts:
                yield DescribedUnit(record_id, fact["index"], fact["text"], fact["sentence_index"], unit_set=tagging)


UNIT_TEXTS = UnitTexts("fact", read=fact_units, unit_set=tagging_of)
