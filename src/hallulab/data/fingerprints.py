"""Fingerprints of the files under the data root that stages read besides the data set.

DVC re-runs a stage when a dependency's hash changes, but the data root
(``$HALLULAB_DATA_ROOT``) lies outside the repository and differs per machine, so its files
cannot be listed as dependencies themselves. The always-run ``data_files`` stage writes, for
each group of such files, a small JSON of their sha256 sums; the stages that read them depend
on that JSON, so editing a file re-runs exactly its readers (DVC compares the JSON's hash),
as the ``source`` stage does for the data set itself:

* ``nli_corpora``: the files ``train_nli``'s recipe reads: the committed open subset's
  (``data/nli_open``) when it reads only that, else every file under ``<root>/nli``;
* ``word_list``: Self-Familiarity's ranked word list (``concepts.word_list_file``), read by the
  ``concepts`` artifact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hallulab.core.data_files import DATA_FILE_GROUPS
from hallulab.core.io import file_sha256
from hallulab.data.loaders import data_root
from hallulab.data.nli_open import OPEN_DIR, OPEN_FILES

GROUPS = DATA_FILE_GROUPS


@dataclass(frozen=True)
class DataFileInputs:
    """What decides which files a group holds: the NLI recipe's sources and held-out sets
    (``nli_train.sources`` keys, ``nli_train.heldout_sets``; None: every data-root set) and
    Self-Familiarity's word list (``concepts.word_list``, ``concepts.word_list_file``)."""

    nli_sources: tuple[str, ...]
    nli_heldout_sets: tuple[str, ...] | None
    word_list: str
    word_list_file: str


def _tree(folder: Path) -> dict[str, str]:
    if not folder.is_dir():
        return {}
    return {
        path.relative_to(folder).as_posix(): file_sha256(path) for path in sorted(folder.rglob("*")) if path.is_file()
    }


def _open_files(names: Sequence[str]) -> dict[str, str]:
    """The committed open-subset files the named NLI sources read, by repository path."""
    return {
        f"data/nli_open/{OPEN_FILES[name]}": file_sha256(OPEN_DIR / OPEN_FILES[name])
        for name in sorted(set(names))
        if (OPEN_DIR / OPEN_FILES[name]).is_file()
    }


def fingerprint(group: str, inputs: DataFileInputs) -> dict[str, Any]:
    """The sha256 of every file of ``group`` that the run reads.

    ``nli_corpora``: when the recipe reads only the open subset committed with the project
    (every source and held-out set named ``open_*``), just those files, whether or not a data
    root is set; else every file under ``<root>/nli`` (empty when the root is unset: the reader
    then says what is missing). ``word_list``: nothing when the list comes from the wordfreq
    package, else the file under the data root when it is there."""
    root = data_root()
    if group == "nli_corpora":
        heldout = inputs.nli_heldout_sets  # None: every held-out set under the data root
        names = [*inputs.nli_sources, *(heldout or ())]
        if heldout is not None and all(name in OPEN_FILES for name in names):
            return {"group": group, "data_root": None, "files": _open_files(names)}
        files = _tree(root / "nli") if root is not None else {}
    elif group == "word_list":
        if inputs.word_list == "wordfreq":
            return {"group": group, "data_root": None, "files": {}, "source": "wordfreq"}
        path = root / inputs.word_list_file if root is not None else None
        files = {inputs.word_list_file: file_sha256(path)} if path is not None and path.is_file() else {}
    else:
        raise ValueError(f"unknown data file group {group!r}; known: {list(GROUPS)}")
    return {"group": group, "data_root": "set" if root is not None else None, "files": files}
