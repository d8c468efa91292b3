"""Which hallulab source files a stage runs: static import analysis.

Every ``import hallulab...`` / ``from hallulab... import ...`` statement counts, at module
level or inside a function (a lazily imported backend is still code the stage may run),
except imports under ``if TYPE_CHECKING:`` (never executed). Package ``__init__`` files on
the way are included (Python runs them). A package whose ``__init__`` imports its own modules by
name (``pkgutil.iter_modules(__path__)``, a registry such as the data sets') reaches every module
in its folder. Modules imported by name at run time (a stage's
method or artifact step) are given as extra roots by the caller. ``root`` is the checkout
whose ``src/`` is read: the repository by default, the DVC workspace for the ``code_files``
stage (which runs in the workspace it fingerprints).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

from hallulab.core.config import REPO_ROOT

SRC = REPO_ROOT / "src"


def module_file(name: str, root: Path = REPO_ROOT) -> Path | None:
    """The source file of a dotted hallulab module name (package ``__init__`` or ``.py``)."""
    path = root / "src" / Path(*name.split("."))
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    return None


def _is_type_checking(node: ast.stmt) -> bool:
    """``if TYPE_CHECKING:`` (or ``if typing.TYPE_CHECKING:``)."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
    return name == "TYPE_CHECKING"


def _statements(body: Iterable[ast.stmt]) -> Iterable[ast.stmt]:
    """Every statement of ``body`` and of the blocks nested in it (functions, classes, loops,
    ``try``, ``with``, ``match``), the bodies of ``if TYPE_CHECKING:`` left out (their
    ``else`` kept). An import is a statement, so only statements need visiting, not the
    expressions inside them."""
    for node in body:
        yield node
        blocks: list[list[ast.stmt]] = []
        if not _is_type_checking(node):
            blocks.append(getattr(node, "body", []))
        blocks += [getattr(node, "orelse", []), getattr(node, "finalbody", [])]
        blocks += [handler.body for handler in getattr(node, "handlers", [])]
        blocks += [case.body for case in getattr(node, "cases", [])]
        for block in blocks:
            yield from _statements(block)


def _own_parts(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of one statement other than the statements nested in it (which
    :func:`_statements` visits in their own turn, or skips under ``if TYPE_CHECKING:``)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.excepthandler, ast.match_case)):
            yield from _own_parts(child)
        elif not isinstance(child, ast.stmt):
            yield from ast.walk(child)


def imported_names(file: Path) -> set[str]:
    """Dotted hallulab names a file imports (``from a.b import c`` gives ``a.b`` and ``a.b.c``).
    A file that does not parse imports nothing here: the stage that runs it fails itself,
    and no other stage's code manifest is held up."""
    stat = file.stat()
    return set(_imported_names(file, stat.st_mtime_ns, stat.st_size))


@cache
def _imported_names(file: Path, mtime_ns: int, size: int) -> frozenset[str]:
    """:func:`imported_names`, parsed once per version of a file (dvc.yaml's ~40 code sets
    share most of their files; an edited file is parsed again)."""
    text = file.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return frozenset()
    names: set[str] = set()
    may_list_own_modules = file.name == "__init__.py" and "iter_modules" in text
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif may_list_own_modules and any(_lists_own_modules(part) for part in _own_parts(node)):
            names.update(_own_modules(file))
    return frozenset(n for n in names if n.split(".")[0] == "hallulab")


def _lists_own_modules(node: ast.AST) -> bool:
    """``pkgutil.iter_modules(__path__)`` (or ``iter_modules(__path__)``): the package imports
    whatever modules its folder holds."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    first = node.args[0]
    return called == "iter_modules" and isinstance(first, ast.Name) and first.id == "__path__"


def _own_modules(init: Path) -> set[str]:
    """Dotted names of the modules and subpackages beside a package's ``__init__.py``."""
    parts = init.parent.parts
    package = ".".join(parts[len(parts) - 1 - parts[::-1].index("hallulab") :])
    found = {f"{package}.{p.stem}" for p in init.parent.glob("*.py") if p.name != "__init__.py"}
    found |= {f"{package}.{p.parent.name}" for p in init.parent.glob("*/__init__.py")}
    return found


def closure(roots: Iterable[Path], root: Path = REPO_ROOT) -> set[Path]:
    """The roots and every hallulab source file they reach through imports."""
    seen: set[Path] = set()
    pending = list(roots)
    seen.update(p for p in pending if root / "src" in p.parents)
    looked_up: set[str] = set()  # most files import the same few modules: stat each name once
    while pending:
        for name in imported_names(pending.pop()):
            parts = name.split(".")
            for prefix in (".".join(parts[:i]) for i in range(1, len(parts) + 1)):
                if prefix in looked_up:
                    continue
                looked_up.add(prefix)
                found = module_file(prefix, root)
                if found is not None and found not in seen:
                    seen.add(found)
                    pending.append(found)
    return seen


def module_roots(*modules: str, root: Path = REPO_ROOT) -> list[Path]:
    found = []
    for name in modules:
        path = module_file(name, root)
        if path is None:
            raise FileNotFoundError(f"no source file for module {name}")
        found.append(path)
        parts = name.split(".")
        for i in range(1, len(parts)):  # the packages Python runs on the way
            parent = module_file(".".join(parts[:i]), root)
            if parent is not None:
                found.append(parent)
    return found


def code_files(script: str, *modules: str, root: Path = REPO_ROOT) -> list[str]:
    """Repository-relative source files a stage script runs (sorted): the script, every
    hallulab module it reaches through imports, and the extra module roots (a method's or
    artifact's step, imported by name at run time) with what they reach."""
    files = closure([root / script, *module_roots(*modules, root=root)], root)
    files.add(root / script)
    return sorted(p.relative_to(root).as_posix() for p in files)
