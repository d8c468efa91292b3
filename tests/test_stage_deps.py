"""Every stage's code deps in dvc.yaml cover every hallulab module its script imports
(transitively), so a code edit always invalidates the stages that run that code."""

from __future__ import annotations

import ast
from pathlib import Path

import yaml

from tests.conftest import REPO

SRC = REPO / "src"


def _module_file(name: str) -> Path | None:
    path = SRC / Path(*name.split("."))
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    return None


def _imports(file: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(file.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return {n for n in names if n.split(".")[0] == "hallulab"}


def imported_files(script: Path) -> set[Path]:
    """hallulab source files reachable from ``script`` (package __init__ files included)."""
    seen: set[Path] = set()
    pending = [script]
    while pending:
        for name in _imports(pending.pop()):
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                found = _module_file(".".join(parts[:i]))
                if found is not None and found not in seen:
                    seen.add(found)
                    pending.append(found)
    return seen


def test_code_deps_cover_every_imported_module() -> None:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    problems = []
    for name, stage in stages.items():
        body = stage.get("do", stage)
        script = REPO / body["cmd"].split()[1]
        deps = [str(d) for d in body["deps"]]
        for file in sorted(imported_files(script)):
            relative = file.relative_to(REPO).as_posix()
            if not any(relative == d or relative.startswith(d.rstrip("/") + "/") for d in deps):
                problems.append(f"{name}: {relative}")
    assert not problems, "stage deps missing imported code:\n" + "\n".join(problems)
