"""Which settings exist: the key tree that the knob classes and ``conf/`` define, and the check
that refuses others.

Hydra accepts ``-S '+samples.temperature=0.5'``: the ``+`` adds a key that no config file
defines, even inside a knob class's schema (the ``+`` opens the node), DVC composes it into
``params.yaml``, and no step reads it, so the run succeeds and the setting does nothing. Every
stage therefore checks the sections it reads against the keys that a knob class declares or
some file under ``conf/`` defines (:func:`check_known`), and refuses the rest in one line naming
the key and the keys that do exist beside it.

The tree is the union over every option of every config group, so a key that only one data
set or profile defines is known everywhere (an option switched by ``-S dataset=...`` stays
usable). Where a file's value is not a mapping (a number, a list, ``null``) or is an empty
mapping, what lies under it is a value, not a setting, and is not checked. The LLM catalogue's
entries are named by the user (``+llm@llm_catalogue.mine=vllm_server``): any entry name is
known, and the keys inside an entry are those of ``conf/llm/*.yaml``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hallulab.core.config import CONF_DIR, ConfigError
from hallulab.core.yaml_files import safe_read

#: Keys Hydra and DVC manage, never settings of this project.
_MANAGED = {"defaults", "hydra"}
#: Any name is known at this level (user-named catalogue entries).
ANY_NAME = "*"


@dataclass
class KeyTree:
    """A node of known settings; ``children is None`` means "a value, not checked below"."""

    children: dict[str, KeyTree] | None = field(default_factory=dict)
    #: a knob section with a schema: its keys are its class's fields, given to the check
    schema: bool = False

    def merge(self, value: Any) -> None:
        """Add what one config file says at this node."""
        if not isinstance(value, Mapping) or not value:
            if self.children is not None and not self.children:
                self.children = None
            return
        if self.children is None:
            return  # another file made this a value: stay lenient
        for key, sub in value.items():
            name = str(key)
            if name in _MANAGED:
                continue
            self.children.setdefault(name, KeyTree()).merge(sub)

    def child(self, name: str) -> KeyTree | None:
        if self.children is None:
            return KeyTree(children=None)
        return self.children.get(name) or self.children.get(ANY_NAME)

    def at(self, path: Iterable[str]) -> KeyTree:
        node = self
        for part in path:
            found = node.child(part)
            if found is None:
                return KeyTree(children=None)
            node = found
        return node


def _load(path: Path) -> tuple[bool, Any]:
    text = path.read_text(encoding="utf-8")
    is_global = any(line.strip().replace(" ", "") == "#@package_global_" for line in text.splitlines()[:5])
    return is_global, safe_read(text)


def _group_packages(defaults: list[Any]) -> dict[str, str]:
    """``group -> package path`` from the root defaults list (``llm@llm_catalogue.x`` -> ``llm_catalogue.*``)."""
    packages: dict[str, str] = {}
    for entry in defaults:
        if not isinstance(entry, Mapping):
            continue
        for key in entry:
            group, _, package = str(key).removeprefix("optional ").removeprefix("override ").partition("@")
            if package:
                parts = package.split(".")
                packages[group] = ".".join([*parts[:-1], ANY_NAME]) if len(parts) > 1 else package
            else:
                packages.setdefault(group, group)
    return packages


@functools.lru_cache(maxsize=4)
def known_tree(conf_dir: Path = CONF_DIR) -> KeyTree:
    """The union of the keys every file under ``conf_dir`` defines, placed as Hydra places them,
    with each knob section that ``conf/config.yaml`` names a schema of marked: its keys are its
    class's fields (:func:`schema_sections`), which the check takes from the caller."""
    root = KeyTree()
    _, main = _load(conf_dir / "config.yaml")
    root.merge(main)
    for group, package in _group_packages(list(main.get("defaults", []))).items():
        for path in sorted((conf_dir / group).glob("*.yaml")):
            is_global, content = _load(path)
            if is_global:
                root.merge(content)
                continue
            node = root
            for part in package.split("."):
                assert node.children is not None
                node = node.children.setdefault(part, KeyTree())
            node.merge(content)
    for section in schema_sections(conf_dir):
        node = root
        for part in section.split("."):
            assert node.children is not None
            node = node.children.setdefault(part, KeyTree())
        node.schema = True
    return root


def schema_sections(conf_dir: Path = CONF_DIR) -> tuple[str, ...]:
    """The knob sections ``conf/config.yaml`` names a schema of (``- /schema/<path>@<section>``),
    read from the file: nothing is imported."""
    _, main = _load(conf_dir / "config.yaml")
    entries = [str(e) for e in main.get("defaults", []) if isinstance(e, str) and e.startswith("/schema/")]
    return tuple(entry.rpartition("@")[2] for entry in entries)


def unknown_keys(
    params: Mapping[str, Any],
    sections: Iterable[str],
    tree: KeyTree,
    fields: Mapping[str, Iterable[str]] | None = None,
) -> list[tuple[str, list[str]]]:
    """``(dotted key, known keys beside it)`` for every key under ``sections`` that no config
    defines. A knob section's keys are its class's fields (``fields``: section -> names); a knob
    section not in ``fields`` is not checked below here (its class checks it where it is read)."""
    found: list[tuple[str, list[str]]] = []
    known_fields = {section: tuple(names) for section, names in (fields or {}).items()}

    def walk(value: Any, node: KeyTree, path: list[str]) -> None:
        if node.schema:
            section = ".".join(path)
            if section not in known_fields:
                return
            children = {name: KeyTree(children=None) for name in known_fields[section]}
            node = KeyTree(children={**(node.children or {}), **children})
        if node.children is None or not isinstance(value, Mapping):
            return
        for key, sub in value.items():
            name = str(key)
            child = node.child(name)
            if child is None:
                found.append((".".join([*path, name]), sorted(k for k in node.children if k != ANY_NAME)))
                continue
            walk(sub, child, [*path, name])

    for section in dict.fromkeys(sections):
        parts = section.split(".")
        value: Any = params
        for part in parts:
            if not isinstance(value, Mapping) or part not in value:
                value = None
                break
            value = value[part]
        if value is None:
            continue
        parent = tree.at(parts[:-1])
        node = parent.child(parts[-1])
        if node is None:
            known = sorted(k for k in (parent.children or {}) if k != ANY_NAME)
            found.append((section, known))
            continue
        walk(value, node, parts)
    return found


def check_known(
    params: Mapping[str, Any],
    sections: Iterable[str],
    conf_dir: Path = CONF_DIR,
    fields: Mapping[str, Iterable[str]] | None = None,
) -> None:
    """Raise :class:`ConfigError` naming the first setting under ``sections`` that ``conf/`` does
    not define (a knob section's: that its class in ``fields`` does not declare)."""
    problems = unknown_keys(params, sections, known_tree(conf_dir), fields)
    if problems:
        key, beside = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ConfigError(
            f"{key}: no config under conf/ defines this setting, so nothing would read it{more}; known here: {beside}"
        )
