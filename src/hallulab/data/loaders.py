"""Loading a data set: the ``dataset`` section checked, its loader found in the registry
(:mod:`hallulab.data.sets`: one module and spec per kind of data set), its records read,
checked and limited as the section says.

The local data root is the one environment variable :data:`DATA_ROOT_ENV`
(:mod:`hallulab.data.root`); no path to a particular machine's copy appears in code or
committed config.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hallulab.core.errors import RecordError
from hallulab.core.io import file_sha256
from hallulab.data.dataset_config import DatasetConfigError, DatasetKnobs, dataset_settings
from hallulab.data.records import load_jsonl_records
from hallulab.data.root import DATA_ROOT_ENV, data_root
from hallulab.data.schema import Record, check_unique_ids
from hallulab.data.sets import dataset_spec

__all__ = [
    "DATA_ROOT_ENV",
    "DatasetConfigError",
    "data_root",
    "limited",
    "load_dataset",
    "load_jsonl_records",
    "select_samples",
    "source_files",
    "source_fingerprint",
]


def source_files(cfg: DatasetKnobs) -> list[Path]:
    """The local files a data set config reads (empty for a hub data set): its spec's
    (:class:`~hallulab.data.sets.spec.DatasetSpec`)."""
    spec = dataset_spec(cfg.loader)
    if spec.files is not None:
        return spec.files(cfg)
    source = cfg.source
    root = data_root()
    if source == "local" or (source == "auto" and root is not None):
        if root is None:
            raise DatasetConfigError(f"dataset.source=local needs {DATA_ROOT_ENV} to be set")
        names = spec.root_files(cfg) if spec.root_files is not None else list(cfg.local_files or [cfg.local_file or ""])
        return [root / str(name) for name in names if name]
    return []


def source_fingerprint(raw: Mapping[str, Any] | DatasetKnobs) -> dict[str, Any]:
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


def load_dataset(raw: Mapping[str, Any] | DatasetKnobs) -> tuple[list[Record], dict[str, Any]]:
    """Check the ``dataset`` section (:func:`dataset_settings`), load it with its loader's spec;
    returns the records and a provenance dict."""
    cfg = dataset_settings(raw)
    records, provenance = dataset_spec(cfg.loader).load(cfg)
    check_unique_ids(records)
    if not records:
        raise DatasetConfigError(f"dataset {cfg.name!r}: the source holds no records ({provenance})")
    limit = cfg.limit
    if limit is not None:
        records = limited(records, limit, cfg.limit_order, cfg.limit_seed)
        provenance = {**provenance, "limit": limit, "limit_order": cfg.limit_order}
    return records, provenance


def limited(records: Sequence[Record], limit: int, order: str, seed: int) -> list[Record]:
    """The first ``limit`` records (``first``), or a seeded random ``limit`` of them kept in
    file order (``random``: for a source sorted by label, such as the SAC3 sets, where the
    first records all share one label)."""
    if order == "first":
        return list(records[:limit])
    if order != "random":
        raise DatasetConfigError(f"dataset.limit_order: expected 'first' or 'random', got {order!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise DatasetConfigError(f"dataset.limit_seed: expected an integer, got {seed!r}")
    if limit >= len(records):
        return list(records)
    chosen = sorted(random.Random(seed).sample(range(len(records)), limit))
    return [records[i] for i in chosen]


def select_samples(record: Record, num_samples: int | None) -> Sequence[str]:
    """The first N samples (the paper's N-ablation slices ``samples[:N]``); errors name the record."""
    if num_samples is None:
        return record.samples
    if num_samples < 0:
        raise RecordError(record.id, "samples", f"num_samples must be >= 0, got {num_samples}")
    if len(record.samples) < num_samples:
        raise RecordError(record.id, "samples", f"has {len(record.samples)} samples; {num_samples} were requested")
    return record.samples[:num_samples]
