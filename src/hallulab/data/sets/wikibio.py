"""SelfCheckGPT's WikiBio GPT-3 set (Manakul et al., 2023): 238 GPT-3 passages, 20 samples each,
a label per sentence; read from the Hugging Face hub (``potsawee/wiki_bio_gpt3_hallucination``,
split ``evaluation``: what real users take) or from a local JSON copy under the data root."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hallulab.core.errors import RecordError
from hallulab.core.io import file_sha256, read_json
from hallulab.data.dataset_config import DatasetConfigError, DatasetKnobs
from hallulab.data.provision import Provision
from hallulab.data.root import DATA_ROOT_ENV, data_root, local_copy
from hallulab.data.schema import Record, record_from_dict
from hallulab.data.sets.spec import DatasetSpec

WIKIBIO_FIELDS = (
    "gpt3_text",
    "wiki_bio_text",
    "gpt3_sentences",
    "annotation",
    "wiki_bio_test_idx",
    "gpt3_text_samples",
)
#: the other way to the data when the local copy is missing
HUB_HINT = "or read the hub copy: -S dataset.source=hub"


def wikibio_row_to_record(row: Mapping[str, Any], position: int, source: str) -> Record:
    """Map one WikiBio GPT-3 row (HF layout) to a Record; errors name the row."""
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
    return record_from_dict(raw, position=position)


def _local_rows(path: Path) -> list[Mapping[str, Any]]:
    payload = read_json(path)
    rows = payload["evaluation"] if isinstance(payload, Mapping) else payload
    if not isinstance(rows, list):
        raise DatasetConfigError(f"{path}: expected a list of rows or {{'evaluation': [...]}}")
    return rows


def _hub_rows(hf_id: str, split: str) -> list[Mapping[str, Any]]:
    try:
        import datasets
    except ImportError as error:
        raise DatasetConfigError(
            f"loading {hf_id!r} from the Hugging Face hub needs the 'hub' extra "
            f"(pip install 'hallulab[hub]'), or set {DATA_ROOT_ENV} to use a local copy"
        ) from error
    return list(datasets.load_dataset(hf_id, split=split))


def load_wikibio(cfg: DatasetKnobs) -> tuple[list[Record], dict[str, Any]]:
    """WikiBio GPT-3 from the hub or the local copy, as chosen by ``dataset.source``.

    ``source``: ``local`` (file ``dataset.local_file`` under the data root), ``hub``, or
    ``auto`` (local when the data root is set, hub otherwise).
    """
    source = cfg.source
    if source == "auto":
        source = "local" if data_root() is not None else "hub"
    label = f"{cfg.hf_id}:{cfg.split}"
    if source == "local":
        path = local_copy(cfg, SPEC.title, SPEC.source, HUB_HINT)
        rows = _local_rows(path)
        provenance = {"source": "local", "file": str(cfg.local_file), "sha256": file_sha256(path)}
    elif source == "hub":
        rows = _hub_rows(str(cfg.hf_id), str(cfg.split))
        provenance = {"source": "hub", "hf_id": str(cfg.hf_id), "split": str(cfg.split)}
    else:
        raise DatasetConfigError(f"dataset.source must be auto, local or hub; got {source!r}")
    records = [wikibio_row_to_record(row, i, label) for i, row in enumerate(rows)]
    return records, provenance


SPEC = DatasetSpec(
    loader="wikibio",
    title="The WikiBio GPT-3 set",
    load=load_wikibio,
    # no prompt, 20 samples, a label per sentence (GPT-3's passages, text-davinci-003)
    provision=Provision(
        prompts=False, samples_in_data=True, sac3_outputs=False, labels=("sentence", "passage"), responses_by="GPT-3"
    ),
    source="wikibio",
)
