"""What a data set declares: :class:`DatasetSpec`, the one place a kind of data set is stated."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hallulab.data.dataset_config import DatasetKnobs
from hallulab.data.provision import Provision
from hallulab.data.schema import Record

Loader = Callable[[DatasetKnobs], tuple[list[Record], dict[str, Any]]]


@dataclass(frozen=True)
class DatasetSpec:
    """One loader (``dataset.loader``) and what every data set it reads is.

    ``provision``: the needs its data sets meet and the levels they label, which the benchmark
    table's applicability reads (None for a loader whose file holds whatever it holds: the
    ``jsonl`` loader; :mod:`hallulab.column` reads such a file's provision off its records).
    ``source``: the data source of ``sources.yaml`` whose files it reads under the data root
    (``hallulab data fetch <source>``; None: no file under the root). The local files a config
    reads (its ``source`` stage's fingerprint, :func:`hallulab.data.loaders.source_files`):
    ``files`` where the loader finds them itself (a path the config names); otherwise, when the
    config reads a local copy, ``root_files``' names under the data root (by default
    ``dataset.local_files`` or ``dataset.local_file``), and none when it reads the hub."""

    loader: str
    title: str
    load: Loader
    provision: Provision | None
    source: str | None = None
    files: Callable[[DatasetKnobs], list[Path]] | None = None
    root_files: Callable[[DatasetKnobs], list[str]] | None = None
