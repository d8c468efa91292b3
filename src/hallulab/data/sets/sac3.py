"""The SAC3 QA hallucination sets (intuit/sac3: NQ-open and HotpotQA, 250 questions each): a
gpt-3.5 answer labelled correct or wrong, 10 resampled answers, the gold answers and SAC3's
perturbed questions with their answers and verdicts, read from a local copy under the data root."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hallulab.core.errors import RecordError
from hallulab.core.io import file_sha256, read_json
from hallulab.data.dataset_config import DatasetConfigError, DatasetKnobs
from hallulab.data.provision import Provision
from hallulab.data.root import local_copy
from hallulab.data.schema import Record, record_from_dict
from hallulab.data.sets.spec import DatasetSpec

SAC3_FIELDS = ("question", "right_answer", "generated_answer", "label", "question_perturb", "perb_evaluations")


def _one_text(value: object, rid: str, field_name: str) -> str:
    """A SAC3 field that is a string, or a list holding one (NQ-open stores lists)."""
    if isinstance(value, list):
        if not value or not isinstance(value[0], str):
            raise RecordError(rid, field_name, "expected a string or a non-empty list of strings")
        return value[0]
    if not isinstance(value, str):
        raise RecordError(rid, field_name, f"expected a string, got {type(value).__name__}")
    return value


def load_sac3(cfg: DatasetKnobs) -> tuple[list[Record], dict[str, Any]]:
    """The SAC3 QA hallucination sets (intuit/sac3: NQ-open, HotpotQA; 250 questions each):
    a gpt-3.5 answer with a correct / wrong label, 10 resampled answers (the samples), the gold
    answers and 10 perturbed questions with their answers and the verifier's verdicts.

    ``response_label`` is 1 when the data's label is "False" (the answer is wrong or a
    refusal). The answer is split into sentences with spaCy (``dataset.spacy_model``). Gold
    answers, perturbed questions, their answers and the verifier outputs are kept in ``meta``
    (``gold_answers``, ``question_perturb``, ``perb_evaluations``, ``self_sc``, ``perb_sc``)."""
    path = local_copy(cfg, SPEC.title, SPEC.source)
    rows = read_json(path)
    if not isinstance(rows, list):
        raise DatasetConfigError(f"{path}: expected a list of records")
    from hallulab.text.spacy_tokens import SpacyTokenizer

    answers = []
    for position, row in enumerate(rows):
        rid = f"{cfg.name}-{position:03d}"
        if not isinstance(row, Mapping):
            raise RecordError(rid, "<record>", "expected an object")
        for name in SAC3_FIELDS:
            if name not in row:
                raise RecordError(rid, name, "missing from the SAC3 record")
        answers.append(_one_text(row["generated_answer"], rid, "generated_answer"))
    splitter = SpacyTokenizer(str(cfg.spacy_model))
    sentences = splitter.sentences(answers)
    records = []
    for position, (row, answer, split) in enumerate(zip(rows, answers, sentences, strict=True)):
        rid = f"{cfg.name}-{position:03d}"
        if row["label"] not in ("True", "False"):
            raise RecordError(rid, "label", f"expected 'True' or 'False', got {row['label']!r}")
        gold = row["right_answer"] if isinstance(row["right_answer"], list) else [row["right_answer"]]
        raw = {
            "id": rid,
            "prompt": row["question"],
            "response": answer,
            "sentences": split or [answer.strip()],
            "samples": [str(s) for s in row.get("self_evaluations") or []],
            "response_label": 0.0 if row["label"] == "True" else 1.0,
            "source": f"{cfg.local_file}[{position}]",
            "meta": {
                "gold_answers": [str(g) for g in gold],
                "question_perturb": list(row["question_perturb"]),
                "perb_evaluations": list(row["perb_evaluations"]),
                "self_sc": list(row.get("self_SC") or []),
                "perb_sc": list(row.get("perb_SC") or []),
            },
        }
        records.append(record_from_dict(raw, position=position))
    return records, {"source": "local", "file": str(cfg.local_file), "sha256": file_sha256(path)}


SPEC = DatasetSpec(
    loader="sac3",
    title="The SAC3 QA sets",
    load=load_sac3,
    # question, 10 resampled answers, SAC3's verdicts, a correct / wrong label per answer
    # (gpt-3.5's answers)
    provision=Provision(
        prompts=True, samples_in_data=True, sac3_outputs=True, labels=("response",), responses_by="GPT-3.5"
    ),
    source="sac3_qa_halu",
)
