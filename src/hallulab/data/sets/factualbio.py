"""FactualBio (Farquhar et al., 2024): 21 GPT-4 biographies with the question, sentence labels
and labelled atomic facts (the claims CCP scores), read from a local copy under the data root."""

from __future__ import annotations

from typing import Any

from hallulab.core.errors import RecordError
from hallulab.core.io import file_sha256, read_json
from hallulab.data.dataset_config import DatasetKnobs
from hallulab.data.provision import Provision
from hallulab.data.root import local_copy
from hallulab.data.schema import Record, record_from_dict
from hallulab.data.sets.spec import DatasetSpec

#: FactualBio's label vocabulary -> numeric label (true 0, minor false 0.5, major false 1).
#: "MAJOR" occurs in two sentence labels of the source as written; it means Major False.
FACTUALBIO_LABELS: dict[object, float] = {True: 0.0, "Minor False": 0.5, "Major False": 1.0, "MAJOR": 1.0}


def _factualbio_label(value: object, rid: str, where: str) -> float:
    if value in FACTUALBIO_LABELS:
        return FACTUALBIO_LABELS[value]
    raise RecordError(rid, where, f"unknown FactualBio label {value!r}; expected one of {list(FACTUALBIO_LABELS)}")


def load_factualbio(cfg: DatasetKnobs) -> tuple[list[Record], dict[str, Any]]:
    """FactualBio (Farquhar et al., 2024): 21 GPT-4 biographies with sentence labels and
    atomic facts with labels (the claims CCP scores, given by the data set).

    The sentences are the spaCy split of the output (``dataset.spacy_model``); a record whose
    sentence-label count differs from its sentence count keeps its fact labels but no
    sentence labels, and is counted in the provenance (``sentence_labels_unusable``)."""
    path = local_copy(cfg, SPEC.title, SPEC.source)
    payload = read_json(path)
    from hallulab.text.spacy_tokens import SpacyTokenizer

    rows = payload["records"]
    split = SpacyTokenizer(str(cfg.spacy_model)).sentences([str(r.get("output", "")) for r in rows])
    records, unusable = [], []
    for position, (row, sentences) in enumerate(zip(rows, split, strict=True)):
        rid = f"factualbio-{row.get('id', position)}"
        for name in ("question", "output", "sentence_labels", "facts", "fact_labels"):
            if name not in row:
                raise RecordError(rid, name, "missing from the FactualBio record")
        if len(row["facts"]) != len(row["fact_labels"]):
            raise RecordError(rid, "fact_labels", f"{len(row['fact_labels'])} labels for {len(row['facts'])} facts")
        labels = None
        if len(row["sentence_labels"]) == len(sentences):
            labels = [_factualbio_label(v, rid, f"sentence_labels[{i}]") for i, v in enumerate(row["sentence_labels"])]
        else:
            unusable.append(rid)
        raw = {
            "id": rid,
            "prompt": row["question"],
            "response": row["output"],
            "sentences": sentences,
            "labels": labels,
            "claims": [
                {"text": fact, "label": _factualbio_label(label, rid, f"fact_labels[{i}]")}
                for i, (fact, label) in enumerate(zip(row["facts"], row["fact_labels"], strict=True))
            ],
            "source": f"{payload.get('source', 'factualbio')}[{position}]",
            "meta": {"source_id": row.get("id")},
        }
        records.append(record_from_dict(raw, position=position))
    provenance = {
        "source": "local",
        "file": str(cfg.local_file),
        "sha256": file_sha256(path),
        "sentence_labels_unusable": unusable,
    }
    return records, provenance


SPEC = DatasetSpec(
    loader="factualbio",
    title="The FactualBio set",
    load=load_factualbio,
    # the question, no samples, sentence labels and labelled atomic facts (GPT-4's biographies)
    provision=Provision(
        prompts=True,
        samples_in_data=False,
        sac3_outputs=False,
        labels=("claim", "sentence", "passage"),
        responses_by="GPT-4",
    ),
    source="factualbio",
)
