"""Loaders: every source data set -> a list of canonical :class:`Passage` records.

Sources:
  * ``wikibio``: the SelfCheckGPT WikiBio GPT-3 set, from the Hugging Face hub
    (``potsawee/wiki_bio_gpt3_hallucination``, split ``evaluation``; what real users take)
    or from a local JSON copy under the data root.
  * ``jsonl``: any JSONL file in the canonical schema (the toy set is one).

The local data root is the one environment variable :data:`DATA_ROOT_ENV`; no path to a
particular machine's copy appears in code or committed config.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hallulab.core.config import package_checkout
from hallulab.core.errors import RecordError
from hallulab.core.io import file_sha256, read_json
from hallulab.data.dataset_config import DatasetConfig, DatasetConfigError, dataset_settings
from hallulab.data.records import load_jsonl_passages
from hallulab.data.schema import Passage, check_unique_ids, passage_from_dict

DATA_ROOT_ENV = "HALLULAB_DATA_ROOT"

WIKIBIO_FIELDS = (
    "gpt3_text",
    "wiki_bio_text",
    "gpt3_sentences",
    "annotation",
    "wiki_bio_test_idx",
    "gpt3_text_samples",
)


def data_root() -> Path | None:
    """The local data root from the environment, or None when unset."""
    value = os.environ.get(DATA_ROOT_ENV, "").strip()
    return Path(value) if value else None


def wikibio_row_to_passage(row: Mapping[str, Any], position: int, source: str) -> Passage:
    """Map one WikiBio GPT-3 row (HF layout) to a Passage; errors name the row."""
    rid = f"wikibio-{position:03d}"
    for name in WIKIBIO_FIELDS:
        if name not in row:
            raise RecordError(rid, name, "missing from the WikiBio row")
    raw = {
        "id": rid,
        "prompt": None,
        "response": row["gpt3_text"],
        "sentences": row["gpt3_sentences"],
        "labels": row["annotation"],
        "samples": row["gpt3_text_samples"],
        "reference": row["wiki_bio_text"],
        "source": f"{source}[{position}]",
        "meta": {"wiki_bio_test_idx": row["wiki_bio_test_idx"], "row": position},
    }
    return passage_from_dict(raw, position=position)


def _wikibio_local_rows(path: Path) -> list[Mapping[str, Any]]:
    payload = read_json(path)
    rows = payload["evaluation"] if isinstance(payload, Mapping) else payload
    if not isinstance(rows, list):
        raise DatasetConfigError(f"{path}: expected a list of rows or {{'evaluation': [...]}}")
    return rows


def _wikibio_hub_rows(hf_id: str, split: str) -> list[Mapping[str, Any]]:
    try:
        import datasets
    except ImportError as error:
        raise DatasetConfigError(
            f"loading {hf_id!r} from the Hugging Face hub needs the 'hub' extra "
            f"(pip install 'hallulab[hub]'), or set {DATA_ROOT_ENV} to use a local copy"
        ) from error
    return list(datasets.load_dataset(hf_id, split=split))


def load_wikibio(cfg: DatasetConfig) -> tuple[list[Passage], dict[str, Any]]:
    """WikiBio GPT-3 from the hub or the local copy, as chosen by ``dataset.source``.

    ``source``: ``local`` (file ``dataset.local_file`` under the data root), ``hub``, or
    ``auto`` (local when the data root is set, hub otherwise).
    """
    source = cfg.source
    root = data_root()
    if source == "auto":
        source = "local" if root is not None else "hub"
    if source == "local":
        if root is None:
            raise DatasetConfigError(f"dataset.source=local needs {DATA_ROOT_ENV} to be set")
        path = root / str(cfg.local_file)
        if not path.is_file():
            raise DatasetConfigError(
                f"WikiBio local copy not found: {path} ({DATA_ROOT_ENV}={root}; `hallulab data fetch wikibio` "
                "names the file to put there, or read the hub copy: -S dataset.source=hub)"
            )
        rows = _wikibio_local_rows(path)
        provenance = {"source": "local", "file": str(cfg.local_file), "sha256": file_sha256(path)}
        label = f"{cfg.hf_id}:{cfg.split}"
    elif source == "hub":
        rows = _wikibio_hub_rows(str(cfg.hf_id), str(cfg.split))
        provenance = {"source": "hub", "hf_id": str(cfg.hf_id), "split": str(cfg.split)}
        label = f"{cfg.hf_id}:{cfg.split}"
    else:
        raise DatasetConfigError(f"dataset.source must be auto, local or hub; got {source!r}")
    passages = [wikibio_row_to_passage(row, i, label) for i, row in enumerate(rows)]
    return passages, provenance


def jsonl_path(cfg: DatasetConfig) -> Path:
    """``dataset.path``: relative to the working folder (the repository, where the stages run),
    else to the data root, else to the checkout hallulab runs from (the toy set's
    ``data/toy/passages.jsonl``, for a command run in another folder)."""
    path = Path(str(cfg.path))
    if not path.is_absolute() and not path.exists():
        root, checkout = data_root(), package_checkout()
        if root is not None and ((root / path).exists() or checkout is None):
            path = root / path
        elif checkout is not None and (checkout / path).is_file():
            path = checkout / path
    if not path.is_file():
        raise DatasetConfigError(f"dataset.path: no such file {path}")
    return path


def load_jsonl(cfg: DatasetConfig) -> tuple[list[Passage], dict[str, Any]]:
    path = jsonl_path(cfg)
    return load_jsonl_passages(path), {"source": "jsonl", "file": str(cfg.path), "sha256": file_sha256(path)}


#: FactualBio's label vocabulary -> numeric label (true 0, minor false 0.5, major false 1).
#: "MAJOR" occurs in two sentence labels of the source as written; it means Major False.
FACTUALBIO_LABELS: dict[object, float] = {True: 0.0, "Minor False": 0.5, "Major False": 1.0, "MAJOR": 1.0}


def _factualbio_label(value: object, rid: str, where: str) -> float:
    if value in FACTUALBIO_LABELS:
        return FACTUALBIO_LABELS[value]
    raise RecordError(rid, where, f"unknown FactualBio label {value!r}; expected one of {list(FACTUALBIO_LABELS)}")


def load_factualbio(cfg: DatasetConfig) -> tuple[list[Passage], dict[str, Any]]:
    """FactualBio (Farquhar et al., 2024): 21 GPT-4 biographies with sentence labels and
    atomic facts with labels (the claims CCP scores, given by the data set).

    The sentences are the spaCy split of the output (``dataset.spacy_model``); a record whose
    sentence-label count differs from its sentence count keeps its fact labels but no
    sentence labels, and is counted in the provenance (``sentence_labels_unusable``)."""
    root = data_root()
    if root is None:
        raise DatasetConfigError(
            f"the FactualBio set is read from a local copy: set {DATA_ROOT_ENV} "
            "(`hallulab data fetch factualbio` names the file to put there)"
        )
    path = root / str(cfg.local_file)
    if not path.is_file():
        raise DatasetConfigError(
            f"FactualBio local copy not found: {path} ({DATA_ROOT_ENV}={root}; "
            "`hallulab data fetch factualbio` names the file to put there)"
        )
    payload = read_json(path)
    from hallulab.text.spacy_tokens import SpacyTokenizer

    records = payload["records"]
    split = SpacyTokenizer(str(cfg.spacy_model)).sentences([str(r.get("output", "")) for r in records])
    passages, unusable = [], []
    for position, (row, sentences) in enumerate(zip(records, split, strict=True)):
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
        passages.append(passage_from_dict(raw, position=position))
    provenance = {
        "source": "local",
        "file": str(cfg.local_file),
        "sha256": file_sha256(path),
        "sentence_labels_unusable": unusable,
    }
    return passages, provenance


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


def load_sac3(cfg: DatasetConfig) -> tuple[list[Passage], dict[str, Any]]:
    """The SAC3 QA hallucination sets (intuit/sac3: NQ-open, HotpotQA; 250 questions each):
    a gpt-3.5 answer with a correct / wrong label, 10 resampled answers (the samples), the gold
    answers and 10 perturbed questions with their answers and the verifier's verdicts.

    ``response_label`` is 1 when the data's label is "False" (the answer is wrong or a
    refusal). The answer is split into sentences with spaCy (``dataset.spacy_model``). Gold
    answers, perturbed questions, their answers and the verifier outputs are kept in ``meta``
    (``gold_answers``, ``question_perturb``, ``perb_evaluations``, ``self_sc``, ``perb_sc``)."""
    root = data_root()
    if root is None:
        raise DatasetConfigError(
            f"the SAC3 sets are read from a local copy: set {DATA_ROOT_ENV} "
            "(`hallulab data fetch sac3_qa_halu --root DIR` downloads them)"
        )
    path = root / str(cfg.local_file)
    if not path.is_file():
        raise DatasetConfigError(
            f"SAC3 local copy not found: {path} ({DATA_ROOT_ENV}={root}; "
            "`hallulab data fetch sac3_qa_halu` downloads it)"
        )
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
    passages = []
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
        passages.append(passage_from_dict(raw, position=position))
    return passages, {"source": "local", "file": str(cfg.local_file), "sha256": file_sha256(path)}


def load_concept7(cfg: DatasetConfig) -> tuple[list[Passage], dict[str, Any]]:
    """Concept-7 (Self-Familiarity): see :mod:`hallulab.data.concept7`."""
    from hallulab.data import concept7

    root = data_root()
    if root is None:
        raise DatasetConfigError(
            f"Concept-7 is read from a local copy: set {DATA_ROOT_ENV} "
            "(`hallulab data fetch concept7 --root DIR` fetches its public files and names the rest)"
        )
    try:
        return concept7.load_concept7(root, cfg)
    except (FileNotFoundError, ValueError) as error:
        if isinstance(error, RecordError):
            raise
        raise DatasetConfigError(f"dataset {cfg.name!r}: {error}") from error


LOADERS: dict[str, Callable[[DatasetConfig], tuple[list[Passage], dict[str, Any]]]] = {
    "wikibio": load_wikibio,
    "jsonl": load_jsonl,
    "factualbio": load_factualbio,
    "sac3": load_sac3,
    "concept7": load_concept7,
}


def source_files(cfg: DatasetConfig) -> list[Path]:
    """The local files a data set config reads (empty for a hub data set)."""
    loader = cfg.loader
    if loader == "jsonl":
        return [jsonl_path(cfg)]
    source = cfg.source
    root = data_root()
    if source == "local" or (source == "auto" and root is not None):
        if root is None:
            raise DatasetConfigError(f"dataset.source=local needs {DATA_ROOT_ENV} to be set")
        if loader == "concept7":
            from hallulab.data.concept7 import concept7_files

            return [root / name for name in concept7_files(cfg)]
        files = list(cfg.local_files or [cfg.local_file or ""])
        return [root / str(name) for name in files if name]
    return []


def source_fingerprint(raw: Mapping[str, Any] | DatasetConfig) -> dict[str, Any]:
    """What identifies the data a config reads: every local file's sha256, or the hub id,
    split and revision. The ``source`` stage writes it so that ``prepare`` re-runs exactly
    when the data changes, wherever it lives."""
    cfg = dataset_settings(raw)
    files = source_files(cfg)
    for path in files:
        if not path.is_file():
            raise DatasetConfigError(f"dataset {cfg.name!r}: source file not found: {path}")
    return {
        "dataset": cfg.name,
        "loader": cfg.loader,
        "files": {path.name: file_sha256(path) for path in files},
        "hub": None if files else {"id": cfg.hf_id, "split": cfg.split, "revision": cfg.revision},
    }


def load_dataset(raw: Mapping[str, Any] | DatasetConfig) -> tuple[list[Passage], dict[str, Any]]:
    """Check the ``dataset`` section (:func:`dataset_settings`), dispatch on its loader; returns
    the passages and a provenance dict."""
    cfg = dataset_settings(raw)
    passages, provenance = LOADERS[cfg.loader](cfg)
    check_unique_ids(passages)
    if not passages:
        raise DatasetConfigError(f"dataset {cfg.name!r}: the source holds no records ({provenance})")
    limit = cfg.limit
    if limit is not None:
        passages = limited(passages, limit, cfg.limit_order, cfg.limit_seed)
        provenance = {**provenance, "limit": limit, "limit_order": cfg.limit_order}
    return passages, provenance


def limited(passages: Sequence[Passage], limit: int, order: str, seed: int) -> list[Passage]:
    """The first ``limit`` records (``first``), or a seeded random ``limit`` of them kept in
    file order (``random``: for a source sorted by label, such as the SAC3 sets, where the
    first records all share one label)."""
    if order == "first":
        return list(passages[:limit])
    if order != "random":
        raise DatasetConfigError(f"dataset.limit_order: expected 'first' or 'random', got {order!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise DatasetConfigError(f"dataset.limit_seed: expected an integer, got {seed!r}")
    if limit >= len(passages):
        return list(passages)
    chosen = sorted(random.Random(seed).sample(range(len(passages)), limit))
    return [passages[i] for i in chosen]


def select_samples(passage: Passage, num_samples: int | None) -> Sequence[str]:
    """The first N samples (the paper's N-ablation slices ``samples[:N]``); errors name the record."""
    if num_samples is None:
        return passage.samples
    if num_samples < 0:
        raise RecordError(passage.id, "samples", f"num_samples must be >= 0, got {num_samples}")
    if len(passage.samples) < num_samples:
        raise RecordError(passage.id, "samples", f"has {len(passage.samples)} samples; {num_samples} were requested")
    return passage.samples[:num_samples]
