"""The report knows no method by name: what a unit is and how to show it is declared by the
artifact or method that defines it (:mod:`hallulab.pipeline.unit_texts`), and the report reads
those declarations generically (:mod:`hallulab.report.declared`).

Every module of :mod:`hallulab.report` is read as Python source: no identifier and no word of a
string (docstrings included) may be a registered method's name. A word is a run of letters,
digits and underscores, compared without case ("HalluCheck's" is the word "HalluCheck"); a
name with an underscore is also found spelt with a hyphen or a space ("Self-Familiarity").
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from hallulab.pipeline import registry

REPORT = Path(__file__).resolve().parents[1] / "src" / "hallulab" / "report"


def _names(tree: ast.AST) -> list[str]:
    """Every identifier the module binds or reads (names, attributes, arguments, definitions,
    imported names and aliases)."""
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.append(node.id)
        elif isinstance(node, ast.Attribute):
            found.append(node.attr)
        elif isinstance(node, ast.arg):
            found.append(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append(node.name)
        elif isinstance(node, ast.alias):
            found.extend(part for part in (*node.name.split("."), node.asname) if part)
        elif isinstance(node, ast.keyword) and node.arg:
            found.append(node.arg)
    return found


def _strings(tree: ast.AST) -> list[str]:
    """Every string constant of the module: docstrings and the literal parts of f-strings too."""
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def method_names_in(source: str, methods: list[str]) -> list[str]:
    """The registered method names ``source`` holds as an identifier or as a word of a string."""
    tree = ast.parse(source)
    names = {name.lower() for name in _names(tree)}
    found = [method for method in methods if method.lower() in names]
    for text in _strings(tree):
        for method in methods:
            spelt = r"[_\- ]".join(re.escape(part) for part in method.split("_"))
            if re.search(rf"(?<![A-Za-z0-9_]){spelt}(?![A-Za-z0-9_])", text, re.IGNORECASE):
                found.append(method)
    return sorted(set(found))


def test_the_check_finds_a_method_named_in_code_or_prose() -> None:
    methods = ["hallucheck", "self_familiarity", "length"]
    assert method_names_in('if method == "hallucheck":\n    pass\n', methods) == ["hallucheck"]
    assert method_names_in('key = f"hallucheck:{tagging}"\n', methods) == ["hallucheck"]
    assert method_names_in('raw.get("self_familiarity", {})\n', methods) == ["self_familiarity"]
    assert method_names_in('"""HalluCheck\'s facts and Self-Familiarity\'s concepts."""\n', methods) == [
        "hallucheck",
        "self_familiarity",
    ]
    assert method_names_in("hallucheck = {}\n", methods) == ["hallucheck"]
    assert method_names_in('"""The hallucheck_ner_greedy variant, of any length_x."""\nlengths = 1\n', methods) == []


@pytest.mark.parametrize("path", sorted(REPORT.glob("**/*.py")), ids=lambda p: str(p.relative_to(REPORT)))
def test_no_report_module_names_a_method(path: Path) -> None:
    methods = list(registry.methods())
    assert len(methods) > 10
    named = method_names_in(path.read_text(encoding="utf-8"), methods)
    assert not named, f"{path.name} names {named}: declare the units on the method or artifact instead"
