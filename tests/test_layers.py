"""The package's layers point one way: the orchestration (``hallulab.dag``) reads the stage
contract (``hallulab.pipeline``) and nothing else imports it; text utilities sit below the
data layer; the stage contract does not reach up into the steps it runs (generation,
correction). Checked on the import statements themselves (:func:`hallulab.dag.imports.imported_names`),
so an upward import fails here before it shows up as a cycle. The foundation
(``hallulab.core``) imports no other hallulab package, which is what lets the DAG generator
name it as one dependency of every stage."""

from __future__ import annotations

from pathlib import Path

import pytest

from hallulab.dag.imports import SRC, imported_names

PACKAGE = SRC / "hallulab"
REPO = SRC.parent


def _modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _importers_of(prefix: str, files: list[Path]) -> list[str]:
    return [
        f"{file.relative_to(REPO)} imports {name}"
        for file in files
        for name in sorted(imported_names(file))
        if name == prefix or name.startswith(prefix + ".")
    ]


def test_nothing_outside_the_orchestration_imports_it() -> None:
    outside = [p for p in _modules(PACKAGE) if PACKAGE / "dag" not in p.parents]
    outside += _modules(REPO / "stages")
    assert _importers_of("hallulab.dag", outside) == []


@pytest.mark.parametrize(
    ("layer", "above"),
    [
        ("text", "hallulab.data"),
        ("text", "hallulab.methods"),
        ("data", "hallulab.methods"),
        ("pipeline", "hallulab.generation"),
        ("pipeline", "hallulab.correction"),
        ("pipeline", "hallulab.dag"),
    ],
)
def test_a_lower_layer_does_not_import_a_higher_one(layer: str, above: str) -> None:
    assert _importers_of(above, _modules(PACKAGE / layer)) == []


def test_the_foundation_imports_only_itself() -> None:
    outside = [
        line
        for line in _importers_of("hallulab", _modules(PACKAGE / "core"))
        if not line.split(" imports ")[1].startswith("hallulab.core")
    ]
    assert outside == []
