"""Each knob declared once: a typed knob class states the values ``conf/`` composes.

A step builds its settings from a params section with :func:`hallulab.core.config.typed`;
that dataclass is the one declaration of a knob's name, default, choices and doc. The
composed ``conf/`` (hence ``params.yaml`` and the config reference, which ``docs/hooks.py``
renders from the yaml) must state the same: every key of a section is a field of its class
(``typed`` refuses any other at run time; these tests show it without a run), every field is
a key, and every default is the value the default composition gives it.

Two kinds of value are no class default and are left out of the default check:

* a value a selection decides: ``${profile.x}`` (quick or paper), a key a profile's values file
  sets (``conf/profile_values/<section>/<profile>.yaml``), ``${dataset.x}`` (no fallback), or a
  key a data set's file sets (``ensemble.members``);
* a section a group's option file sets whole (``nli``, ``bertscore``, ``sentence_similarity``, ``dataset``,
  ``nli_train``, an ``llm_catalogue`` entry): each option states every value, a choice and
  not a default, so only its keys are checked, in every option.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from omegaconf import OmegaConf

from hallulab.core.config import CONF_DIR, REPO_ROOT, compose
from hallulab.pipeline import settings_schema
from hallulab.pipeline.members import Member

SRC = REPO_ROOT / "src" / "hallulab"


@dataclass(frozen=True)
class Section:
    """A params section and the class built from it; ``elsewhere``: the section's keys that
    another reader takes (a prompt file's name, a score stage's own key)."""

    cls: type
    elsewhere: tuple[str, ...] = ()


#: Every knob section with one default, as the settings' schema declares them
#: (:func:`hallulab.pipeline.settings_schema.knob_sections`): the pipeline's own steps' and
#: every section a registered method or artifact declares on its spec (``knobs``), so a new
#: method's knob class is checked here without an edit to this file.
KNOB_SECTIONS: dict[str, Section] = {
    name: Section(cls, knob.elsewhere) for name, (cls, knob) in settings_schema.knob_sections().items()
}
#: Sections a group's option file sets whole (``conf/<group>/<option>.yaml``).
OPTION_SECTIONS: dict[str, Section] = {
    name: Section(cls, knob.elsewhere) for name, (cls, knob) in settings_schema.option_sections().items()
}
#: ``llm_catalogue`` entries (conf/llm/*.yaml) by backend; ``backend`` and ``name`` are read by build_llm.
LLM_BACKENDS: dict[str, type] = settings_schema.llm_backends()
#: Classes ``typed`` builds that are not a section: an item of a knob's list.
ITEM_CLASSES = {"Member": "an item of ensemble.members (EnsembleKnobs.members)"}
#: ``${profile.x}`` or ``${dataset.x}``: a value the selected profile or data set decides.
SELECTED = re.compile(r"\$\{(?P<group>profile|dataset)\.[\w.]+\}")


@pytest.fixture(scope="module")
def composed() -> dict[str, Any]:
    """The default composition, resolved (what params.yaml holds)."""
    return compose([])


@pytest.fixture(scope="module")
def unresolved() -> dict[str, Any]:
    """The default composition with its interpolations as written."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF_DIR.resolve()), version_base=None):
        cfg = hydra_compose(config_name="config")
    container = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(container, dict)
    return {str(k): v for k, v in container.items()}


def _at(tree: Mapping[str, Any], path: str) -> Any:
    node: Any = tree
    for part in path.split("."):
        node = node[part]
    return node


def _plain(value: Any) -> Any:
    """A default as the composed yaml writes it (tuples as lists, dataclasses as mappings)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return dataclasses.MISSING


def _leaves(node: Any, prefix: str) -> Iterator[str]:
    if isinstance(node, Mapping) and node:
        for key, value in node.items():
            yield from _leaves(value, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix


@functools.cache
def _set_by_profiles() -> frozenset[str]:
    """Leaf keys a profile's values file sets (``conf/profile_values/<section>/<profile>.yaml``)."""
    found: set[str] = set()
    for path in (CONF_DIR / "profile_values").glob("*/*.yaml"):
        found |= set(_leaves(yaml.safe_load(path.read_text(encoding="utf-8")) or {}, path.parent.name))
    return frozenset(found)


@functools.cache
def _set_by_data_sets() -> frozenset[str]:
    """Leaf keys a data set's file sets outside its ``dataset`` section (``ensemble.members``)."""

    found: set[str] = set()
    for path in (CONF_DIR / "dataset").glob("*.yaml"):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        found |= {
            leaf for key, value in data.items() if key not in ("defaults", "dataset") for leaf in _leaves(value, key)
        }
    return frozenset(found)


def _keys_check(section: str, spec: Section, values: Mapping[str, Any]) -> list[str]:
    """What the section and the class disagree on, in words."""
    fields = {f.name for f in dataclasses.fields(spec.cls) if f.init}
    problems = [
        f"{section}.{k}: not a field of {spec.cls.__name__}" for k in values if k not in fields | set(spec.elsewhere)
    ]
    problems += [f"{section}.{k}: listed as read elsewhere, yet a field" for k in spec.elsewhere if k in fields]
    return problems


@pytest.mark.parametrize("section", sorted(KNOB_SECTIONS))
def test_a_knob_sections_keys_are_its_class_fields(section: str, composed: dict[str, Any]) -> None:
    spec = KNOB_SECTIONS[section]
    values = _at(composed, section)
    problems = _keys_check(section, spec, values)
    problems += [f"{section}.{k}: listed as read elsewhere, not in conf/" for k in spec.elsewhere if k not in values]
    problems += [
        f"{spec.cls.__name__}.{f.name}: no key {section}.{f.name} in conf/"
        for f in dataclasses.fields(spec.cls)
        if f.init and f.name not in values
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("section", sorted(KNOB_SECTIONS))
def test_a_knob_class_defaults_are_the_composed_values(
    section: str, composed: dict[str, Any], unresolved: dict[str, Any]
) -> None:
    """Each default equals the default composition's value, unless a selection decides it."""
    spec = KNOB_SECTIONS[section]
    values, written = _at(composed, section), _at(unresolved, section)
    by_data_sets = _set_by_data_sets()
    problems = []
    for field in dataclasses.fields(spec.cls):
        if not field.init or field.name not in values:
            continue
        raw = written[field.name]
        key = f"{section}.{field.name}"
        if (isinstance(raw, str) and SELECTED.fullmatch(raw)) or key in by_data_sets or key in _set_by_profiles():
            continue
        if _plain(_default(field)) != values[field.name]:
            problems.append(
                f"{spec.cls.__name__}.{field.name}: default {_default(field)!r}, "
                f"conf/ composes {section}.{field.name} = {values[field.name]!r}"
            )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("section", sorted(OPTION_SECTIONS))
def test_every_option_of_a_group_has_only_its_class_fields(section: str) -> None:
    spec = OPTION_SECTIONS[section]
    options = sorted(p.stem for p in (CONF_DIR / section).glob("*.yaml"))
    assert options, f"no conf/{section}/*.yaml"
    problems = [p for option in options for p in _keys_check(section, spec, compose([f"{section}={option}"])[section])]
    assert not problems, "\n".join(problems)


def test_every_llm_catalogue_entry_has_only_its_backends_fields(composed: dict[str, Any]) -> None:
    problems = []
    for name, entry in composed["llm_catalogue"].items():
        options = {k: v for k, v in entry.items() if k not in ("backend", "name")}
        problems += _keys_check(f"llm_catalogue.{name}", Section(LLM_BACKENDS[entry["backend"]]), options)
    assert not problems, "\n".join(problems)


def _typed_class_names() -> set[str]:
    """Every class name passed first to ``typed(...)`` in the package and the stage scripts."""
    pattern = re.compile(r"\btyped\(\s*([A-Z]\w*)\s*,")
    files = [*SRC.rglob("*.py"), *(REPO_ROOT / "stages").glob("*.py")]
    return {m.group(1) for path in files for m in pattern.finditer(path.read_text(encoding="utf-8"))}


def _knobs_classes() -> dict[str, type]:
    """Every ``*Knobs`` dataclass defined under ``hallulab.methods``."""
    found: dict[str, type] = {}
    for path in (SRC / "methods").rglob("*.py"):
        names = re.findall(r"^class (\w+Knobs)\b", path.read_text(encoding="utf-8"), re.MULTILINE)
        if not names:
            continue
        module = importlib.import_module(".".join(path.relative_to(SRC.parent).with_suffix("").parts))
        found |= {n: getattr(module, n) for n in names if dataclasses.is_dataclass(getattr(module, n))}
    return found


def test_the_tables_cover_every_class_built_with_typed() -> None:
    listed = {s.cls.__name__ for s in (*KNOB_SECTIONS.values(), *OPTION_SECTIONS.values())}
    listed |= {cls.__name__ for cls in LLM_BACKENDS.values()}
    missing = _typed_class_names() - listed - set(ITEM_CLASSES)
    assert not missing, f"built with typed() but in no table of {Path(__file__).name}: {sorted(missing)}"
    assert Member.__name__ in ITEM_CLASSES


def test_every_knobs_class_of_the_methods_is_declared_on_a_spec() -> None:
    """A ``*Knobs`` class a method defines is one of its spec's ``knobs`` (or the class of a config
    group's options, such as ``bertscore``): declared there, it is checked against conf/ above with
    no edit to this file."""
    listed = {s.cls for s in (*KNOB_SECTIONS.values(), *OPTION_SECTIONS.values())}
    missing = {name for name, cls in _knobs_classes().items() if cls not in listed}
    assert not missing, f"*Knobs classes no MethodSpec.knobs declares: {sorted(missing)}"


def _literal_equal(written: Any, default: Any) -> bool:
    """Whether ``written`` (a conf file's value) restates ``default`` (the class's), type and all:
    a file writing ``0`` where the class says ``0.0`` composes another value into params.yaml."""
    if type(written) is not type(default):
        return False
    if isinstance(written, list):
        return len(written) == len(default) and all(_literal_equal(a, b) for a, b in zip(written, default, strict=True))
    if isinstance(written, dict):
        return written.keys() == default.keys() and all(_literal_equal(written[k], default[k]) for k in written)
    return bool(written == default)


def test_a_conf_file_states_only_what_differs_from_its_knob_class() -> None:
    """Each knob's default is written once, in its class: ``conf/config.yaml`` names every knob
    section's schema first, so a file that writes a class's default again holds a second copy
    (a test of the first copy's change would not see the second)."""
    problems = []
    for path in sorted(CONF_DIR.rglob("*.yaml")):
        text = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for section, spec in KNOB_SECTIONS.items():
            values: Any = text
            for part in section.split("."):
                values = values.get(part) if isinstance(values, Mapping) else None
            if not isinstance(values, Mapping):
                continue
            for field in dataclasses.fields(spec.cls):
                if field.init and field.name in values and _literal_equal(values[field.name], _plain(_default(field))):
                    where = path.relative_to(CONF_DIR)
                    problems.append(f"conf/{where}: {section}.{field.name} restates {spec.cls.__name__}'s default")
    assert not problems, "\n".join(problems)


def test_the_root_config_names_every_knob_sections_schema_first() -> None:
    """The schema entries come before every other entry of the defaults list, so a data set's or
    profile's file, composed after them, changes a section's values (``ensemble.members``)."""
    defaults = yaml.safe_load((CONF_DIR / "config.yaml").read_text(encoding="utf-8"))["defaults"]
    schemas = [entry for entry in defaults if isinstance(entry, str) and entry.startswith("/schema/")]
    assert schemas == [f"/schema/{s.replace('.', '/')}@{s}" for s in KNOB_SECTIONS]
    assert defaults[: len(schemas)] == schemas
