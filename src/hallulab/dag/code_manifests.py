"""The code each stage runs, as one small file per stage: the always-run ``code_files`` stage.

DVC re-runs a stage when the hash of one of its dependencies changes, so a stage must depend
on the source files it runs. Listed one by one in ``dvc.yaml`` they were 848 of the 1,158
paths in ``dvc.lock`` (60% of its 172 KB), and DVC parses and rewrites the whole lock after
every stage it runs: bookkeeping that grows with the lock and cost more than a cheap stage's
own process. With the manifests the lock is 82 KB and the bookkeeping shrinks with it.

Instead every stage depends on one manifest, ``data/code_files/<key>.json``: the sha256 of
each source file the stage runs (the script and every hallulab module it reaches,
:func:`hallulab.dag.imports.code_files`). The ``code_files`` stage runs first on every
``dvc repro`` and rewrites the manifests; an edit changes the manifests of exactly the
stages that import the edited file, so DVC re-runs those and no others, and the same code
gives byte-identical manifests (committed, like the data fingerprints of ``data_files``).

One manifest serves every item of a ``foreach`` stage (``evaluate@<method>`` runs the same
code for every method), so the key is the stage's name in ``dvc.yaml``, not the item's.

What it costs: a DVC command that does not run ``code_files`` first cannot see a code edit:
``dvc status`` (it reports ``code_files`` as always changed; ``make status`` refreshes the
manifests first, then asks DVC), and ``dvc repro`` / ``dvc exp run`` of single stages
(``-s``, ``--downstream``), which then compare the last manifests written.

The outputs persist (DVC does not delete them before the stage runs), so a failure here
leaves the committed manifests in place.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hallulab.core.config import REPO_ROOT
from hallulab.core.io import file_sha256, write_json
from hallulab.dag.imports import code_files
from hallulab.pipeline import paths

#: the stage that writes the manifests (always runs; upstream of every stage with code)
STAGE = "code_files"


@dataclass(frozen=True)
class CodeSet:
    """The code of one stage of ``dvc.yaml``: its script and the modules it imports by name."""

    key: str  #: the stage's name in dvc.yaml (a foreach stage's template name)
    script: str  #: ``stages/<script>.py``
    modules: tuple[str, ...] = ()  #: extra import roots (a method's or artifact's step)

    @property
    def manifest_path(self) -> str:
        """The file the stage depends on instead of its source files."""
        return paths.code_manifest(self.key)

    def files(self, root: Path = REPO_ROOT) -> list[str]:
        """Source files the stage runs, relative to the checkout ``root``, sorted."""
        return code_files(f"stages/{self.script}.py", *self.modules, root=root)

    def manifest(self, root: Path = REPO_ROOT, digests: dict[Path, str] | None = None) -> dict[str, Any]:
        """``{"stage": key, "files": {path: sha256}}``: equal code, equal bytes. ``digests``
        holds the sums already taken (most stages share most files)."""
        digests = {} if digests is None else digests
        files = {}
        for path in self.files(root):
            if root / path not in digests:
                digests[root / path] = file_sha256(root / path)
            files[path] = digests[root / path]
        return {"stage": self.key, "files": files}


class CodeSets:
    """The code sets of dvc.yaml's stages, collected while the generator builds it."""

    def __init__(self) -> None:
        self._sets: dict[str, CodeSet] = {}

    def dep(self, key: str, script: str, *modules: str) -> str:
        """Register a stage's code; returns the manifest path the stage lists as a dependency."""
        code_set = CodeSet(key, script, tuple(modules))
        if self._sets.setdefault(key, code_set) != code_set:
            raise ValueError(f"two stages named {key!r} run different code: {self._sets[key]} and {code_set}")
        return code_set.manifest_path

    def __iter__(self) -> Iterator[CodeSet]:
        return iter(sorted(self._sets.values(), key=lambda s: s.key))


def write_manifests(code_sets: CodeSets, root: Path) -> list[Path]:
    """Write every manifest of the checkout ``root`` (its code, into its ``data/code_files``)
    and remove those of stages that no longer exist."""
    written = []
    digests: dict[Path, str] = {}
    for code_set in code_sets:
        target = root / code_set.manifest_path
        write_json(target, code_set.manifest(root, digests))
        written.append(target)
    folder = root / paths.CODE_MANIFEST_DIR
    for stale in set(folder.glob("*.json")) - set(written):
        stale.unlink()
    return written


def main() -> int:
    """``python -m hallulab.dag.code_manifests``: the ``code_files`` stage's command, run by
    DVC in the workspace it fingerprints (the current directory)."""
    from hallulab.dag.dvcgen import code_sets  # the generator imports this module

    written = write_manifests(code_sets(), Path.cwd())
    print(f"{STAGE}: {len(written)} code manifests", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
