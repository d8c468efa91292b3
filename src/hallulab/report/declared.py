"""Which declaration names the units of each method's level, from the registered specs.

An artifact or a method that defines units declares them (:mod:`hallulab.pipeline.unit_texts`):
the level, and a reader of its stored file. A method's units at a level are named by its own
declaration (read from its raw scores) when it has one at that level, else by the first artifact
it requires (in its ``requires`` order) that declares that level; any other unit is one the
records spell out (a sentence, the response, a given claim, the prompt). The page's caller
passes the registered specs in; nothing here names a method or an artifact.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from hallulab.pipeline import paths
from hallulab.pipeline.spec import ArtifactSpec, MethodSpec
from hallulab.pipeline.unit_texts import UnitTexts


@dataclass(frozen=True)
class UnitFile:
    """A stored file that defines units: a shared artifact's, or a method's raw scores."""

    kind: Literal["artifact", "method"]
    name: str

    def path(self, dataset: str) -> str:
        """Where a run wrote it for ``dataset`` (relative to the repository)."""
        if self.kind == "artifact":
            return paths.artifact(self.name, "json", dataset)
        return paths.raw_scores(self.name, dataset)


@dataclass(frozen=True)
class DeclaredUnits:
    """One declaration as a page applies it: the file it reads, and the methods whose units at
    its level it names."""

    source: UnitFile
    texts: UnitTexts
    methods: tuple[str, ...]


def declared_units(
    methods: Mapping[str, MethodSpec], artifacts: Mapping[str, ArtifactSpec]
) -> tuple[DeclaredUnits, ...]:
    """Every declaration of ``artifacts`` and ``methods`` with the methods it names units of
    (see the module docstring); an artifact's that names no method's units is left out."""
    found = [
        DeclaredUnits(UnitFile("method", name), spec.units, (name,))
        for name, spec in methods.items()
        if spec.units is not None
    ]
    for name, artifact in artifacts.items():
        texts = artifact.units
        if texts is None:
            continue
        named = tuple(
            method
            for method, spec in methods.items()
            if texts.level in spec.scored_levels and artifact_naming(spec, texts.level, artifacts) == name
        )
        if named:
            found.append(DeclaredUnits(UnitFile("artifact", name), texts, named))
    return tuple(found)


def artifact_naming(spec: MethodSpec, level: str, artifacts: Mapping[str, ArtifactSpec]) -> str | None:
    """The artifact whose declaration names ``spec``'s units at ``level``: None when the method
    declares them itself or requires no artifact that declares that level."""
    if spec.units is not None and spec.units.level == level:
        return None
    for name in spec.requires:
        texts = artifacts[name].units if name in artifacts else None
        if texts is not None and texts.level == level:
            return name
    return None
