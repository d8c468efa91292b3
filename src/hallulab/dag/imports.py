"""Which hallulab source files a stage runs: static import analysis.

Every ``import hallulab...`` / ``from hallulab... import ...`` statement counts, at module
level or inside a function (a lazily imported backend is still code the stage may run),
except imports under ``if TYPE_CHECKING:`` (never executed). Package ``__init__`` files on
the way are included (Python runs them). Modules imported by name at run time (a stage's
method or artifact step) are given as extra roots by the caller.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from hallulab.core.config import REPO_ROOT

SRC = REPO_ROOT / "src"


def module_file(name: str) -> Path | None:
    """The source file of a dotted hallulab module name (package ``__init__`` or ``.py``)."""
    path = SRC / Path(*name.split("."))
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    return None


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
            if name == "TYPE_CHECKING":
                for child in node.body:
                    skipped.update(id(n) for n in ast.walk(child))
    return skipped


def imported_names(file: Path) -> set[str]:
    """Dotted hallulab names a file imports (``from a.b import c`` gives ``a.b`` and ``a.b.c``)."""
    tree = ast.parse(file.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {n for n in names if n.split(".")[0] == "hallulab"}


def closure(roots: Iterable[Path]) -> set[Path]:
    """The roots and every hallulab source file they reach through imports."""
    seen: set[Path] = set()
    pending = list(roots)
    seen.update(p for p in pending if SRC in p.parents)
    while pending:
        for name in imported_names(pending.pop()):
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                found = module_file(".".join(parts[:i]))
                if found is not None and found not in seen:
                    seen.add(found)
                    pending.append(found)
    return seen


def module_roots(*modules: str) -> list[Path]:
    found = []
    for name in modules:
        path = module_file(name)
        if path is None:
            raise FileNotFoundError(f"no source file for module {name}")
        found.append(path)
        parts = name.split(".")
        for i in range(1, len(parts)):  # the packages Python runs on the way
            parent = module_file(".".join(parts[:i]))
            if parent is not None:
                found.append(parent)
    return found


#: The kernel every stage runs on: the foundation (errors, I/O, config, units) and the stage
#: contract (specs, registry, params, runner). A stage that runs any module of one of these
#: packages depends on the whole folder, so dvc.yaml names two kernel paths per stage
#: instead of a dozen files. Wider than the import trace by design: an edit to a kernel
#: module a stage does not import re-runs that stage too (a spare run, never a stale one).
KERNEL_PACKAGES = (SRC / "hallulab" / "core", SRC / "hallulab" / "pipeline")


def _members(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*.py") if "__pycache__" not in p.parts}


def widen_to_kernel(files: set[Path]) -> set[Path]:
    """The files, with every module of each kernel package the stage reaches."""
    out = set(files)
    for kernel in KERNEL_PACKAGES:
        if any(kernel in p.parents for p in files):
            out |= _members(kernel)
    return out


def collapse(files: set[Path]) -> list[Path]:
    """Replace the files of a package folder by the folder when the stage runs every module
    in it (DVC then hashes the folder; ``.dvcignore`` keeps ``__pycache__`` out). Exact: the
    folder holds those files and nothing else that runs."""
    out: set[Path] = set(files)
    folders = sorted({p.parent for p in files if SRC in p.parents}, key=lambda d: len(d.parts))
    for folder in folders:
        if folder == SRC / "hallulab" or not any(f.parent == folder for f in out):
            continue
        members = _members(folder)
        if members and members <= out:
            out -= members
            out.add(folder)
    return sorted(out)


def code_deps(script: Path, *modules: str) -> list[str]:
    """Repository-relative source files and folders a stage script runs (sorted), with extra
    module roots; each kernel package it reaches is one folder."""
    files = widen_to_kernel(closure([script, *module_roots(*modules)]))
    files.add(script)
    return sorted(p.relative_to(REPO_ROOT).as_posix() for p in collapse(files))
