"""The local data root (``$HALLULAB_DATA_ROOT``) and a data set's copy under it.

The data root is the one environment variable :data:`DATA_ROOT_ENV`; no path to a particular
machine's copy appears in code or committed config. :func:`local_copy` is every loader's one
guard for a file it reads there: a root that is not set, or a file that is not in it, is one
line naming the variable and the ``hallulab data fetch`` command of the data set's source.
"""

from __future__ import annotations

import os
from pathlib import Path

from hallulab.data.dataset_config import DatasetConfigError, DatasetKnobs

DATA_ROOT_ENV = "HALLULAB_DATA_ROOT"


def data_root() -> Path | None:
    """The local data root from the environment, or None when unset."""
    value = os.environ.get(DATA_ROOT_ENV, "").strip()
    return Path(value) if value else None


def fetch_hint(source: str | None, otherwise: str = "") -> str:
    """What gets a data set's files: its source's fetch command, then ``otherwise``."""
    found = f"`hallulab data fetch {source}` fetches its public files and names the rest" if source else ""
    return "; ".join(part for part in (found, otherwise) if part)


def needed_root(title: str, source: str | None, otherwise: str = "") -> Path:
    """The data root, or one line saying that ``title`` is read from a local copy under it."""
    root = data_root()
    if root is None:
        raise DatasetConfigError(
            f"{title} is read from a local copy: set {DATA_ROOT_ENV} ({fetch_hint(source, otherwise)})"
        )
    return root


def local_copy(cfg: DatasetKnobs, title: str, source: str | None, otherwise: str = "") -> Path:
    """``dataset.local_file`` under the data root, checked: a root that is not set, or a file
    that is not there, is one line naming the variable and ``source``'s fetch command
    (``otherwise``: another way to the data, said after it)."""
    root = needed_root(title, source, otherwise)
    path = root / str(cfg.local_file)
    if not path.is_file():
        raise DatasetConfigError(
            f"{title}: local copy not found: {path} ({DATA_ROOT_ENV}={root}; {fetch_hint(source, otherwise)})"
        )
    return path
