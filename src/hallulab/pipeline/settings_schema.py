"""The settings' schema: every knob class as an OmegaConf structured config, in Hydra's ConfigStore.

A knob class (a dataclass of :func:`hallulab.core.config.setting` fields) is the one
declaration of a section's knobs: names, types, defaults, choices and docs. A method or an
artifact declares its classes on its spec (``knobs=(KnobSection(...),)``, found by
:func:`hallulab.pipeline.registry.knob_sections`); the pipeline's own steps and the config
groups' options declare theirs below (:data:`PIPELINE_KNOBS`, :data:`OPTION_KNOBS`,
:data:`LLM_BACKEND_KNOBS`). This module

* turns each class into its schema (:func:`schema_view`): a structured config with the same
  fields and defaults, typed as far as OmegaConf types a value without rewriting it (see
  :func:`schema_type`);
* registers every schema in Hydra's ConfigStore as ``schema/<section path>`` (:func:`register`),
  which the ``hydra_plugins.hallulab_schemas`` module does in every process that composes
  ``conf/`` (Hydra imports the ``hydra_plugins`` modules when it first looks for plugins; DVC's
  ``dvc exp run`` looks before it composes ``params.yaml``). ``conf/config.yaml`` names every knob
  section's schema first in its defaults list (``- /schema/samples@samples``, written by
  ``make regen``: :mod:`hallulab.dag.method_defaults`), so a section's defaults are its class's
  and every file under ``conf/`` states only what differs from them (a profile's value, a data
  set's); Hydra's merge refuses a value of a type the class does not declare;
* checks composed settings against the schemas (:func:`check_settings`): a key no class or
  step declares is refused in one line naming it and the keys beside it (Hydra's ``+`` adds a
  key to any config, and no step would read it), and a value of the wrong type in
  :func:`~hallulab.core.config.typed`'s words; ranges and choices stay ``typed``'s, which each
  step applies to the sections it reads. The test suite checks every shipped composition
  with it, the ``code_files`` stage checks ``params.yaml`` with it before any stage runs
  (:func:`main`), and the API and ``hallulab plan`` check their compositions with it. A stage
  checks the knob sections it reads when it starts (:func:`check_sections`), importing only
  their classes and building no pipeline graph.

The settings tree (:func:`settings_tree`) places each class at its section; around them, the
keys a step declares in its :class:`~hallulab.pipeline.spec.StepInputs` (a prompt file's name,
``claims.source``, ``selfcheck_mqag.roles``), the LLM roles the steps name (``llms.<role>``),
``llm_catalogue`` entries (each checked against its backend's class) and the two sections no
step builds a class from (:class:`ProfileKnobs`, :class:`SpacyKnobs`). What lies below a
declared key that no class describes is a value, not a setting, and is not checked.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from omegaconf import MISSING, OmegaConf
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

from hallulab.core.config import ConfigError, covers, dotted_value, typed
from hallulab.pipeline.spec import KnobSection

#: The knob sections of the pipeline's own steps: one composition gives every value (or the
#: selected profile or data set decides it). Declared as a spec declares its knobs, with the
#: module in full, and imported only when the schema is built (the steps sit above this layer).
PIPELINE_KNOBS: tuple[KnobSection, ...] = (
    KnobSection("generate", "hallulab.generation:GenerateKnobs"),
    KnobSection("samples", "hallulab.methods.sample_selection:SampleKnobs"),
    KnobSection("evaluate", "hallulab.evaluation.protocol:ProtocolKnobs"),
    KnobSection("correction", "hallulab.correction.knobs:CorrectionKnobs", elsewhere=("prompts",)),
)
#: Sections a config group's option sets whole (``conf/<group>/<option>.yaml``): each option
#: states its own values, a choice rather than a default.
OPTION_KNOBS: tuple[KnobSection, ...] = (
    KnobSection("nli", "hallulab.nli.scorer:NLIKnobs"),
    KnobSection("bertscore", "hallulab.methods.bertscore:BERTScoreKnobs"),
    KnobSection("sentence_similarity", "hallulab.methods.sentence_similarity:SentenceSimilarityKnobs"),
    KnobSection("dataset", "hallulab.data.dataset_config:DatasetKnobs"),
    KnobSection("nli_train", "hallulab.nli.train:NLITrainKnobs", elsewhere=("profile",)),
)
#: An ``llm_catalogue`` entry's class, by its ``backend`` (:func:`hallulab.llm.build_llm`).
LLM_BACKEND_KNOBS: dict[str, str] = {
    "hf": "hallulab.llm.hf:HFKnobs",
    "openai": "hallulab.llm.openai_backend:OpenAIKnobs",
    "vllm": "hallulab.llm.vllm_backend:VLLMKnobs",
    "langchain": "hallulab.llm.langchain_backend:LangChainKnobs",
}
#: Keys of every catalogue entry that ``build_llm`` reads itself, not its backend's class.
LLM_ENTRY_KEYS = ("name", "backend")
#: The group of the ConfigStore entries (``schema/ccp/score``, ``schema/llm/hf``).
GROUP = "schema"


@dataclass
class ProfileKnobs:
    """params ``profile``: the selected profile (conf/profile/<name>.yaml), which the summary reads."""

    name: str = MISSING
    description: str = MISSING


@dataclass
class SpacyKnobs:
    """params ``spacy``: the spaCy pipeline the steps split and tokenise with."""

    model: str = MISSING
    batch_size: int = MISSING


def knob_class(declared: str, package: str = "") -> type:
    """The class a ``<module>:<Class>`` declaration names (the module inside ``package`` when given)."""
    module, _, name = declared.partition(":")
    found = getattr(importlib.import_module(f"{package}.{module}" if package else module), name)
    assert isinstance(found, type) and dataclasses.is_dataclass(found), declared
    return found


@functools.cache
def knob_sections() -> dict[str, tuple[type, KnobSection]]:
    """Every knob section with one default: the pipeline's own and those the registered methods
    and artifacts declare on their specs. section -> (class, declaration)."""
    from hallulab.pipeline import registry

    found = {knob.section: (knob_class(knob.cls), knob) for knob in PIPELINE_KNOBS}
    for section, entry in registry.knob_sections().items():
        if section in found:
            raise ValueError(f"knob section {section!r} is declared twice")
        found[section] = entry
    return found


def _overlaps(key: str, section: str) -> bool:
    """Whether the params key ``key`` lies in ``section`` or covers it (``ccp`` covers ``ccp.score``)."""
    return covers(section, key) or covers(key, section)


def section_owner(section: str) -> str:
    """The method or artifact package that may declare ``section`` (``hallulab.methods.ccp`` for
    ``ccp.score``), found on disk without importing a package; "" for none."""
    import hallulab

    owner = section.split(".")[0]
    root = Path(hallulab.__file__).parent
    for kind in ("methods", "artifacts"):
        if (root / kind / owner / "__init__.py").is_file():
            return f"hallulab.{kind}.{owner}"
    return ""


def read_sections(keys: Sequence[str]) -> dict[str, tuple[type, KnobSection]]:
    """The knob sections that the params ``keys`` of one step lie in or cover, with their
    classes: the pipeline's sections and those the owning method's or artifact's spec declares,
    importing only those packages and the classes' modules (what a stage checks its settings
    against when it starts, and what its code manifest lists: :func:`section_modules`). A config
    group's option (``nli``, ``dataset``) is not among them: its class may sit beside a model
    backend that a cheap stage does not import, and the ``code_files`` stage checks it.
    section -> (class, declaration)."""
    found: dict[str, tuple[type, KnobSection]] = {}
    for knob in PIPELINE_KNOBS:
        if any(_overlaps(key, knob.section) for key in keys):
            found[knob.section] = (knob_class(knob.cls), knob)
    for package in dict.fromkeys(section_owner(key) for key in keys if "${" not in key):
        if not package:
            continue
        spec: Any = importlib.import_module(package).SPEC
        for knob in spec.knobs:
            if any(_overlaps(key, knob.section) for key in keys):
                found[knob.section] = (knob_class(knob.cls, package), knob)
    return found


def section_modules(keys: Sequence[str]) -> tuple[str, ...]:
    """The modules a step that declares the params ``keys`` imports to check the knob sections
    it reads (:func:`read_sections`): each section's owning package and class module."""
    found = [m for section, (cls, _) in read_sections(keys).items() for m in (section_owner(section), cls.__module__)]
    return tuple(dict.fromkeys(m for m in found if m))


@functools.cache
def option_sections() -> dict[str, tuple[type, KnobSection]]:
    """The sections a config group's option sets whole: section -> (class, declaration)."""
    return {knob.section: (knob_class(knob.cls), knob) for knob in OPTION_KNOBS}


@functools.cache
def llm_backends() -> dict[str, type]:
    """An ``llm_catalogue`` entry's class by its backend."""
    return {backend: knob_class(declared) for backend, declared in LLM_BACKEND_KNOBS.items()}


# ---------------------------------------------------------------- a knob class as a schema

_SCALARS = (bool, int, float, str)


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (Union, types.UnionType)


def schema_type(hint: Any, scalar_ok: bool = False) -> Any:
    """The type OmegaConf checks a knob's value against, from the knob's type ``hint``.

    OmegaConf types scalars, ``Optional``, ``Union`` of scalars, lists and mappings of those, and
    nested structured configs; it refuses a ``Literal``, a ``tuple`` default and a frozen class.
    A float is ``Union[int, float]`` (a value written ``0`` stays ``0``; :func:`typed` makes it
    a float); a tuple or sequence is a list; a ``Literal`` of strings is ``str``; a sequence knob
    that may be one value (``scalar_ok``: a sweep point, ``-S selfcheck_ngram.n=2``) and anything
    else OmegaConf cannot type is ``Any`` (its items are left to :func:`typed`).
    """
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any or hint is type(None):
        return Any
    if _is_union(hint):
        options = [schema_type(a) for a in args if a is not type(None)]
        if any(option is Any for option in options):
            return Any
        optional = type(None) in args
        if len(options) == 1:
            return Optional[options[0]] if optional else options[0]  # noqa: UP045 (OmegaConf reads typing's forms)
        if all(option in _SCALARS for option in options):
            union = Union[tuple(options)]  # type: ignore[valid-type]  # noqa: UP007
            return Optional[union] if optional else union  # noqa: UP045
        return Any
    if origin is typing.Literal:
        return str if all(isinstance(a, str) for a in args) else Any
    if origin in (tuple, list, Sequence):
        if scalar_ok:
            return Any
        items = [a for a in args if a is not Ellipsis]
        item = items[0] if items and all(a == items[0] for a in items) else Any
        return list[schema_type(item)]  # type: ignore[misc]
    if origin in (dict, Mapping):
        value = args[1] if len(args) == 2 else Any
        return dict[str, schema_type(value)]  # type: ignore[misc]
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return schema_view(hint)
    if hint is float:  # a number: OmegaConf's float would rewrite a value written 0 as 0.0
        return Union[int, float]  # noqa: UP007
    if hint in _SCALARS:
        return hint
    return Any


def plain_default(value: Any) -> Any:
    """A knob's default as the composition writes it: a tuple as a list, a dataclass as a mapping."""
    return _schema_default(value)


def _schema_default(value: Any) -> Any:
    """A default as OmegaConf takes it: a tuple as a list, a dataclass as its schema's values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _schema_default(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_schema_default(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _schema_default(v) for k, v in value.items()}
    return value


def _schema_field(name: str, hint: Any, source: dataclasses.Field[Any] | None) -> tuple[str, Any, Any]:
    """``(name, type, field)`` for :func:`dataclasses.make_dataclass`."""
    meta = source.metadata if source is not None else {}
    kind = schema_type(hint, bool(meta.get("scalar_ok")))
    default: Any = MISSING
    if source is not None and source.default is not dataclasses.MISSING:
        default = source.default
    elif source is not None and source.default_factory is not dataclasses.MISSING:
        default = source.default_factory()
    if default is MISSING:
        return name, kind, field(default=MISSING)
    plain = _schema_default(default)
    if isinstance(plain, list | dict):
        return name, kind, field(default_factory=functools.partial(_copy, plain))
    return name, kind, field(default=plain)


def _copy(value: Any) -> Any:
    return _schema_default(value)


@functools.cache
def schema_view(cls: type, elsewhere: tuple[str, ...] = (), extra: tuple[str, ...] = ()) -> type:
    """The schema of the knob class ``cls``: a (mutable) dataclass with its fields, defaults and
    :func:`schema_type` types, then ``extra`` keys (str) and the section's ``elsewhere`` keys
    (another reader's: any value), which have no default."""
    hints = typing.get_type_hints(cls)
    fields: list[tuple[str, Any, Any]] = [(name, str, field(default=MISSING)) for name in extra]
    fields += [_schema_field(f.name, hints[f.name], f) for f in dataclasses.fields(cls) if f.init]
    fields += [(name, Any, field(default=MISSING)) for name in elsewhere]
    view = dataclasses.make_dataclass(cls.__name__, fields, namespace={"__doc__": cls.__doc__})
    view.__module__ = cls.__module__
    view.__qualname__ = f"{cls.__qualname__}.schema"
    return view


def schema_defaults() -> dict[str, dict[str, Any]]:
    """Every knob section's keys with their defaults (``???`` where the class has none), as the
    schema entries of ``conf/config.yaml`` put them into every composition: section -> values."""
    found = {}
    for section, (cls, knob) in knob_sections().items():
        values = OmegaConf.to_container(OmegaConf.structured(schema_view(cls, knob.elsewhere)))
        assert isinstance(values, dict)
        found[section] = {str(key): value for key, value in values.items()}
    return found


# ---------------------------------------------------------------- the ConfigStore entries


def _entries() -> Iterator[tuple[str, type]]:
    """``(ConfigStore path, schema)`` of every section's class and every LLM backend's."""
    for section, (cls, knob) in {**knob_sections(), **option_sections()}.items():
        yield f"{GROUP}/{section.replace('.', '/')}", schema_view(cls, knob.elsewhere)
    for backend, cls in llm_backends().items():
        yield f"{GROUP}/llm/{backend}", schema_view(cls, extra=LLM_ENTRY_KEYS)


def register() -> list[str]:
    """Store every schema in Hydra's ConfigStore (``schema/<section path>``, ``schema/llm/<backend>``);
    returns the paths. Storing again replaces an entry, so calling this twice is harmless."""
    from hydra.core.config_store import ConfigStore

    store = ConfigStore.instance()
    paths = []
    for path, view in _entries():
        group, _, name = path.rpartition("/")
        store.store(name=name, node=view, group=group)
        paths.append(path)
    return paths


# ---------------------------------------------------------------- the settings tree


@dataclass
class SettingsNode:
    """A node of the settings tree: a section checked by its class's schema (``section``), a
    value not checked below (``value``), an ``llm_catalogue`` (``catalogue``), or keys (``children``)."""

    children: dict[str, SettingsNode] = field(default_factory=dict)
    section: tuple[str, type, type] | None = None  #: (section, knob class, schema)
    value: bool = False
    catalogue: bool = False

    def at(self, path: str) -> SettingsNode:
        node = self
        for part in path.split("."):
            node = node.children.setdefault(part, SettingsNode())
        return node

    def covers(self, path: str) -> bool:
        """Whether a section or a value lies at ``path`` or above it."""
        node = self
        for part in path.split("."):
            if node.section is not None or node.value or node.catalogue:
                return True
            if part not in node.children:
                return False
            node = node.children[part]
        return node.section is not None or node.value or node.catalogue or bool(node.children)


def _declared_keys() -> Iterator[str]:
    """Every params key a step of the pipeline graph declares (its params and prompts)."""
    from hallulab.pipeline.graph import pipeline_graph

    for node in pipeline_graph().nodes.values():
        yield from node.inputs.params
        yield from node.inputs.prompts


def _llm_roles() -> tuple[str, ...]:
    from hallulab.pipeline.graph import pipeline_graph

    roles = (role for node in pipeline_graph().nodes.values() for role in node.inputs.llm_roles)
    return tuple(dict.fromkeys(roles))


@functools.cache
def settings_tree() -> SettingsNode:
    """Where every setting lies and what checks it (see the module's docstring)."""
    root = SettingsNode()
    for section, (cls, knob) in {**knob_sections(), **option_sections()}.items():
        root.at(section).section = (section, cls, schema_view(cls, knob.elsewhere))
    root.at("profile").section = ("profile", ProfileKnobs, ProfileKnobs)
    root.at("spacy").section = ("spacy", SpacyKnobs, SpacyKnobs)
    roles = dataclasses.make_dataclass("LLMRoles", [(role, str, field(default=MISSING)) for role in _llm_roles()])
    root.at("llms").section = ("llms", roles, roles)
    root.at("llm_catalogue").catalogue = True
    for key in _declared_keys():
        if "${" not in key and not root.covers(key):
            root.at(key).value = True
    return root


# ---------------------------------------------------------------- the check


@dataclass(frozen=True)
class SettingProblem:
    """A setting the schema refuses: its dotted key, and the keys beside it (an unknown key) or
    what is wrong with its value."""

    key: str
    known: tuple[str, ...] = ()
    message: str = ""

    def __str__(self) -> str:
        if self.message:
            return self.message
        return (
            f"{self.key}: no config under conf/ defines this setting, so nothing would read it; "
            f"known here: {list(self.known)}"
        )


def _structured_problems(node: SettingsNode, value: Any, path: str) -> list[SettingProblem]:
    """What the schema of the section at ``path`` refuses in ``value``: its unknown keys, else
    the first value OmegaConf's structured merge refuses, in :func:`typed`'s words."""
    assert node.section is not None
    _, cls, view = node.section
    if not isinstance(value, Mapping):
        return [SettingProblem(path, message=f"{path}: expected a mapping, got {value!r}")]
    unknown = _unknown_keys(view, value, path)
    if unknown:
        return unknown
    try:
        OmegaConf.merge(OmegaConf.structured(view), dict(value))
    except (ConfigKeyError, ConfigAttributeError) as error:  # not met: _unknown_keys walks every level
        return [SettingProblem(path, message=_one_line(path, error))]
    except OmegaConfBaseException as error:
        if cls is not view:
            fields = {f.name for f in dataclasses.fields(cls)}
            try:
                typed(cls, {k: v for k, v in value.items() if k in fields}, path)
            except ConfigError as refused:
                return [SettingProblem(path, message=str(refused))]
            return []  # the schema's type is a narrowing typed() does not make: typed() decides
        return [SettingProblem(path, message=_one_line(path, error))]
    return []


def _nested(kind: Any) -> tuple[type | None, bool]:
    """The schema a field's type nests (itself, or the item of a list, ``Optional`` or not) and
    whether it is a list of them."""
    if _is_union(kind):
        inner = [a for a in typing.get_args(kind) if a is not type(None)]
        return _nested(inner[0]) if len(inner) == 1 else (None, False)
    if typing.get_origin(kind) is list:
        item = typing.get_args(kind)[0]
        return (item, True) if dataclasses.is_dataclass(item) and isinstance(item, type) else (None, False)
    return (kind, False) if dataclasses.is_dataclass(kind) and isinstance(kind, type) else (None, False)


def _unknown_keys(view: type, value: Mapping[str, Any], path: str) -> list[SettingProblem]:
    """The keys of ``value`` that the schema ``view`` does not declare, at every level it nests."""
    fields = {f.name: f for f in dataclasses.fields(view)}
    found = [SettingProblem(f"{path}.{key}", tuple(fields)) for key in value if str(key) not in fields]
    for name, f in fields.items():
        nested, many = _nested(f.type)
        sub = value.get(name)
        if nested is None or sub is None:
            continue
        items = list(enumerate(sub)) if many and isinstance(sub, list) else [(None, sub)]
        for index, item in items:
            if isinstance(item, Mapping):
                where = f"{path}.{name}" if index is None else f"{path}.{name}[{index}]"
                found += _unknown_keys(nested, item, where)
    return found


def _one_line(path: str, error: OmegaConfBaseException) -> str:
    where = f"{path}.{error.full_key}" if error.full_key else path
    reason = " ".join(str(error.msg if error.msg is not None else error).split())
    return f"{where}: {reason}"


def _problems(node: SettingsNode, value: Any, path: str) -> list[SettingProblem]:
    if node.value:
        return []
    if node.section is not None:
        return _structured_problems(node, value, path)
    if node.catalogue:
        return _catalogue_problems(value, path)
    if not isinstance(value, Mapping):
        return [SettingProblem(path, message=f"{path}: expected a mapping of settings, got {value!r}")]
    found = []
    for key, sub in value.items():
        name = str(key)
        where = f"{path}.{name}" if path else name
        if name not in node.children:
            found.append(SettingProblem(where, tuple(sorted(node.children))))
            continue
        found += _problems(node.children[name], sub, where)
    return found


def _catalogue_problems(value: Any, path: str) -> list[SettingProblem]:
    """Each entry against its backend's class (an unknown backend is :func:`build_llm`'s to name)."""
    if not isinstance(value, Mapping):
        return [SettingProblem(path, message=f"{path}: expected a mapping of LLM entries, got {value!r}")]
    found = []
    backends = llm_backends()
    for name, entry in value.items():
        backend = entry.get("backend") if isinstance(entry, Mapping) else None
        if backend not in backends:
            continue
        cls = backends[backend]
        view = schema_view(cls, extra=LLM_ENTRY_KEYS)
        found += _structured_problems(SettingsNode(section=(f"{path}.{name}", cls, view)), entry, f"{path}.{name}")
    return found


def settings_problems(params: Mapping[str, Any]) -> list[SettingProblem]:
    """Every setting of the composed ``params`` that the schema refuses."""
    return _problems(settings_tree(), {str(key): value for key, value in params.items()}, "")


def check_settings(params: Mapping[str, Any]) -> None:
    """Raise :class:`ConfigError` naming the first setting the schema refuses (and how many more)."""
    _raise_first(settings_problems(params))


def section_problems(params: Mapping[str, Any], keys: Sequence[str]) -> list[SettingProblem]:
    """What the schemas of the knob sections a step reads (:func:`read_sections`) refuse in
    ``params``: the check a stage makes when it starts, building neither the settings tree nor
    the pipeline graph (the ``code_files`` stage checks every setting first: :func:`main`)."""
    found = []
    for section, (cls, knob) in read_sections(keys).items():
        value = dotted_value(params, section)
        if value is not None:
            node = SettingsNode(section=(section, cls, schema_view(cls, knob.elsewhere)))
            found += _structured_problems(node, value, section)
    return found


def _raise_first(problems: list[SettingProblem]) -> None:
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        first = str(problems[0])
        if not problems[0].message:
            first = first.replace("; known here:", f"{more}; known here:", 1)
            more = ""
        raise ConfigError(first + more)


def check_sections(params: Mapping[str, Any], keys: Sequence[str]) -> None:
    """Raise :class:`ConfigError` naming the first setting :func:`section_problems` finds."""
    _raise_first(section_problems(params, keys))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m hallulab.pipeline.settings_schema [params.yaml]``: every setting of the file
    checked against the schema (:func:`check_settings`); a refused one is one line on stderr and
    exit status 2. The ``code_files`` stage runs it after writing the manifests
    (:mod:`hallulab.dag.code_manifests`), so that ``dvc repro`` and ``dvc exp run`` refuse
    ``-S '+samples.temperature=0.5'`` before any stage runs."""
    import sys

    from hallulab.core.config import load_params

    args = list(sys.argv[1:] if argv is None else argv)
    path = args[0] if args else "params.yaml"
    container = OmegaConf.to_container(load_params(path), resolve=False)
    assert isinstance(container, dict)
    try:
        check_settings({str(key): value for key, value in container.items()})
    except ConfigError as error:
        print(f"{path}: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
