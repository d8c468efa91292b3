"""Concept-7 (Luo et al., 2023, Self-Familiarity §4.1, Table 1; released with the paper's
code, soap117/Self-evaluation): prompt-only records, one per instruction.

* **Test records** (``meta.split = "test"``): the 515 instructions (3 per concept at most) of
  the 180 test concepts of ``data_knowledge_7_general_multi.csv`` (seven domains; 74 of the
  concepts are fictional). ``prompt_label`` is the familiarity label of the model chosen by
  ``dataset.labels_from`` (1 = unfamiliar: the model should refuse), from the released
  GPT-4 annotations (``<model>-7-messages.json``: ``flag`` true = familiar, ``score`` the
  1-9 rating), or from the crowd annotation of Vicuna (``vicuna-13b-v1.3-human``: a real
  concept's averaged rating and label; a fictional concept, which the crowd did not rate, is
  unfamiliar with rating 1, as the GPT-4 files mark it). ``meta.unfamiliarity`` =
  (9 - rating) / 8 is what the prompt-level Pearson correlates with (Table 2's PEA).
  ``meta.concepts`` holds the concepts the paper's GPT-3.5 extractor found in the instruction
  (the ``Entities`` column; ``concepts.source = given`` uses them).
* **Basic records** (``meta.split = "basic"``, no label): the 192 common concepts of
  ``data_common.csv``, used only to set each method's threshold (Appendix D). The 451 basic
  instructions of Table 1 are not released; each basic record's instruction is the
  explanation prompt of its concept (``Explain the "{concept}" within one short paragraph.``)
  and its one concept is the concept itself.

A stated subset: ``test_concepts: K`` keeps K test concepts taken round-robin over the seven
domains in file order (every instruction of each), ``basic_concepts: K`` the first K basic
concepts; the same subset then holds for every compared method.
"""

from __future__ import annotations

import ast
import csv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hallulab.core.errors import RecordError
from hallulab.core.io import file_sha256, read_json
from hallulab.data.dataset_config import CONCEPT7_LABEL_SOURCES, DatasetKnobs, dataset_settings
from hallulab.data.schema import Record, record_from_dict

#: The models whose familiarity labels are released, and the crowd-annotated Vicuna labels.
LABEL_SOURCES = CONCEPT7_LABEL_SOURCES
TEST_FILE = "data_knowledge_7_general_multi.csv"
BASIC_FILE = "data_common.csv"
HUMAN_FILE = "vicuna-13b-v1.3-7-human-anno.json"
BASIC_INSTRUCTION = 'Explain the "{concept}" within one short paragraph.'
MAX_RATING = 9.0


def label_file(source: str) -> str:
    return HUMAN_FILE if source.endswith("-human") else f"{source}-7-messages.json"


def concept7_files(raw: Mapping[str, Any] | DatasetKnobs) -> list[str]:
    """The files (relative to the data root) a Concept-7 config reads."""
    cfg = dataset_settings(raw)
    folder = str(cfg.local_dir)
    source = str(cfg.labels_from)
    return [f"{folder}/{name}" for name in (TEST_FILE, BASIC_FILE, label_file(source))]


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def _literal_list(value: str, rid: str, field_name: str) -> list[Any]:
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError) as error:
        raise RecordError(rid, field_name, f"not a Python list literal: {error}") from error
    if not isinstance(parsed, list):
        raise RecordError(rid, field_name, f"expected a list, got {type(parsed).__name__}")
    return parsed


def _labels(source: str, path: Path) -> dict[str, tuple[bool, float]]:
    """concept -> (familiar, rating 1-9) from one label file."""
    payload = read_json(path)
    if source.endswith("-human"):
        labels, scores = payload["label"], payload["score"]
        return {c: (bool(labels[c]), float(scores[c])) for c in labels}
    out: dict[str, tuple[bool, float]] = {}
    for position, row in enumerate(payload):
        for name in ("concept", "flag", "score"):
            if name not in row:
                raise RecordError(f"{path.name}[{position}]", name, "missing from the label record")
        out[str(row["concept"])] = out[str(row["concept"]).strip()] = (bool(row["flag"]), float(row["score"]))
    return out


def _round_robin(rows: list[dict[str, str]], count: int | None) -> list[int]:
    """Row positions: all, or ``count`` taken in turn from each domain (file order)."""
    if count is None:
        return list(range(len(rows)))
    by_domain: dict[str, list[int]] = {}
    for position, row in enumerate(rows):
        by_domain.setdefault(row["Domain"], []).append(position)
    chosen: list[int] = []
    depth = 0
    while len(chosen) < count and any(depth < len(v) for v in by_domain.values()):
        for positions in by_domain.values():
            if depth < len(positions) and len(chosen) < count:
                chosen.append(positions[depth])
        depth += 1
    return sorted(chosen)


def load_concept7(root: Path, raw: Mapping[str, Any] | DatasetKnobs) -> tuple[list[Record], dict[str, Any]]:
    """Test and basic records (see the module docstring)."""
    cfg = dataset_settings(raw)
    source = cfg.labels_from
    files = [root / name for name in concept7_files(cfg)]
    for path in files:
        if not path.is_file():
            raise FileNotFoundError(f"Concept-7 file not found: {path}")
    test_rows, basic_rows = _read_csv(files[0]), _read_csv(files[1])
    labels = _labels(source, files[2])
    records: list[Record] = []
    missing_labels: list[str] = []
    for position in _round_robin(test_rows, cfg.test_concepts):
        row = test_rows[position]
        concept = row["Concept"].strip()
        rid = f"concept7-{position:03d}"
        for name in ("Domain", "Concept", "Real", "Questions", "Entities"):
            if name not in row:
                raise RecordError(rid, name, f"missing from {TEST_FILE}")
        questions = _literal_list(row["Questions"], rid, "Questions")
        entities = _literal_list(row["Entities"], rid, "Entities")
        if len(questions) != len(entities):
            raise RecordError(rid, "Entities", f"{len(entities)} entity lists for {len(questions)} questions")
        real = row["Real"].strip().upper() == "TRUE"
        label_key = concept if concept in labels else row["Concept"]  # a label file may keep stray spaces
        if label_key in labels:
            familiar, rating = labels[label_key]
        elif source.endswith("-human") and not real:
            familiar, rating = False, 1.0  # fictional: the crowd did not rate it
        else:
            missing_labels.append(concept)
            continue
        for index, (question, found) in enumerate(zip(questions, entities, strict=True)):
            raw = {
                "id": f"{rid}-q{index}",
                "prompt": str(question),
                "response": None,
                "prompt_label": 0.0 if familiar else 1.0,
                "source": f"{TEST_FILE}[{position}].Questions[{index}]",
                "meta": {
                    "split": "test",
                    "concept": concept,
                    "domain": row["Domain"],
                    "real": real,
                    "concepts": [str(c) for c in found],
                    "familiarity_rating": rating,
                    "unfamiliarity": (MAX_RATING - rating) / (MAX_RATING - 1.0),
                    "labels_from": source,
                },
            }
            records.append(record_from_dict(raw, position=position))
    basic_count = cfg.basic_concepts
    for position, row in enumerate(basic_rows[:basic_count] if basic_count else basic_rows):
        concept = row["Concept"].strip()
        raw = {
            "id": f"concept7-basic-{position:03d}",
            "prompt": BASIC_INSTRUCTION.format(concept=concept),
            "response": None,
            "source": f"{BASIC_FILE}[{position}]",
            "meta": {
                "split": "basic",
                "concept": concept,
                "domain": row.get("Domain", "general"),
                "concepts": [concept],
            },
        }
        records.append(record_from_dict(raw, position=position))
    provenance = {
        "source": "local",
        "files": {path.name: file_sha256(path) for path in files},
        "labels_from": source,
        "test_records": sum(p.meta["split"] == "test" for p in records),
        "basic_records": sum(p.meta["split"] == "basic" for p in records),
        "concepts_without_label": missing_labels,
    }
    return records, provenance
