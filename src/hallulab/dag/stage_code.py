"""The code each stage of ``dvc.yaml`` runs: its script and the hallulab modules it imports,
collected while the generator (:mod:`hallulab.dag.dvcgen`) builds the file, and each stage's
manifest of their sha256 sums, which the ``code_files`` stage writes
(:mod:`hallulab.dag.code_manifests`, which says why)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hallulab.core.config import REPO_ROOT
from hallulab.core.io import file_sha256
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
