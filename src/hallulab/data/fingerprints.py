"""Fingerprints of the files under the data root that stages read besides the data set.

DVC re-runs a stage when a dependency's hash changes, but the data root
(``$HALLULAB_DATA_ROOT``) lies outside the repository and differs per machine, so its files
cannot be listed as dependencies themselves. The always-run ``data_files`` stage writes, for
each group of such files, a small JSON of their sha256 sums; the stages that read them depend
on that JSON, so editing a file re-runs exactly its readers (DVC compares the JSON's hash),
as the ``source`` stage does for the data set itself:

* ``nli_corpora``: every file under ``<root>/nli`` (``train_nli``'s training and held-out sets);
* ``word_list``: Self-Familiarity's ranked word list (``concepts.word_list_file``), read by the
  ``concepts`` artifact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hallulab.core.io import file_sha256
from hallulab.data.loaders import data_root

GROUPS = ("nli_corpora", "word_list")


def _tree(folder: Path) -> dict[str, str]:
    if not folder.is_dir():
        return {}
    return {
        path.relative_to(folder).as_posix(): file_sha256(path) for path in sorted(folder.rglob("*")) if path.is_file()
    }


def fingerprint(group: str, word_list_file: str) -> dict[str, Any]:
    """The sha256 of every file of ``group`` under the data root (empty when the root is unset
    or the files are absent: the readers then say what is missing)."""
    root = data_root()
    if root is None:
        return {"group": group, "data_root": None, "files": {}}
    if group == "nli_corpora":
        files = _tree(root / "nli")
    elif group == "word_list":
        path = root / word_list_file
        files = {word_list_file: file_sha256(path)} if path.is_file() else {}
    else:
        raise ValueError(f"unknown data file group {group!r}; known: {list(GROUPS)}")
    return {"group": group, "data_root": "set", "files": files}
