"""Any JSONL file in the canonical schema (the toy set is one): it holds whatever its records
hold, so it declares no provision (:mod:`hallulab.column` reads one off a labelled file's
records)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hallulab.core.config import package_checkout
from hallulab.core.io import file_sha256
from hallulab.data.dataset_config import DatasetConfigError, DatasetKnobs
from hallulab.data.records import load_jsonl_records
from hallulab.data.root import data_root
from hallulab.data.schema import Record
from hallulab.data.sets.spec import DatasetSpec


def jsonl_path(cfg: DatasetKnobs) -> Path:
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


def load_jsonl(cfg: DatasetKnobs) -> tuple[list[Record], dict[str, Any]]:
    path = jsonl_path(cfg)
    return load_jsonl_records(path), {"source": "jsonl", "file": str(cfg.path), "sha256": file_sha256(path)}


SPEC = DatasetSpec(
    loader="jsonl",
    title="A JSONL file in the canonical schema",
    load=load_jsonl,
    provision=None,
    files=lambda cfg: [jsonl_path(cfg)],
)
