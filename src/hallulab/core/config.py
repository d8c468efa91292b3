"""Reading the composed parameters that DVC hands to every stage.

DVC composes ``params.yaml`` from ``conf/`` (Hydra) on ``dvc exp run``; ``dvc repro``
uses the committed file as it is. Stage scripts therefore read ``params.yaml`` with
OmegaConf and never call ``@hydra.main`` (the DVC Hydra guide's advice).
"""

from __future__ import annotations

import collections.abc
import copy
import dataclasses
import functools
import hashlib
import math
import re
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from omegaconf import DictConfig, OmegaConf

from hallulab.core.errors import UserFacingError
from hallulab.core.yaml_files import load_config

T = TypeVar("T")

REPO_ROOT = Path(__file__).resolve().parents[3]


def package_checkout() -> Path | None:
    """The checkout the running hallulab is imported from (:data:`REPO_ROOT`, when its
    ``src/hallulab`` is this package: an editable install or a source tree), or None for an
    installed package (where ``REPO_ROOT`` is no checkout)."""
    package = Path(__file__).resolve().parents[1]
    return REPO_ROOT if (REPO_ROOT / "src" / "hallulab").resolve() == package else None


#: The configs, inside the package (``pip install`` ships them): in a checkout a link to the
#: repository's ``conf/``, which ``dvc exp run`` composes from.
CONF_DIR = Path(__file__).parent.parent / "conf"


def load_params(path: str | Path = "params.yaml") -> DictConfig:
    """The composed parameters; a missing file says how to make it."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: run `make params` (or `dvc exp run`) to compose it from conf/")
    cfg = load_config(path)  # OmegaConf.load
    if not isinstance(cfg, DictConfig):
        raise ValueError(f"{path}: expected a mapping at the top level")
    return cfg


def compose(overrides: Sequence[str] = (), conf_dir: Path = CONF_DIR) -> dict[str, Any]:
    """Compose ``conf/config.yaml`` with Hydra overrides, resolved to plain containers.

    A composition depends only on the overrides, the YAML files under ``conf_dir`` and the knob
    schemas they name in Hydra's ConfigStore, so a process composes each distinct triple once
    (the table's columns and the checks compose the same data sets again and again) and every
    call gets a copy of its own."""
    root = conf_dir.resolve()
    return copy.deepcopy(_composed(tuple(overrides), root, _config_digest(root)))


def _config_digest(root: Path) -> str:
    """A digest of every YAML file under ``root`` (names and contents) and of the schemas in
    Hydra's ConfigStore. Hydra imports the ``hydra_plugins`` modules when it first looks for
    plugins, and ``hydra_plugins.hallulab_schemas`` stores the knob classes' schemas then, so
    the search is made here first: the digest sees the schemas a composition will merge."""
    from hydra.core.config_store import ConfigStore
    from hydra.core.plugins import Plugins

    Plugins.instance()
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.yaml")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    _digest_store(digest, ConfigStore.instance().repo.get("schema", {}), "schema")
    return digest.hexdigest()


def _digest_store(digest: Any, entries: Mapping[str, Any], where: str) -> None:
    """Add a ConfigStore group (its entries' names and contents, nested groups too) to ``digest``."""
    for name in sorted(entries):
        entry = entries[name]
        if isinstance(entry, Mapping):
            _digest_store(digest, entry, f"{where}/{name}")
        else:
            text = OmegaConf.to_yaml(entry.node)
            digest.update(f"{where}/{name}".encode() + b"\0" + text.encode() + b"\0")


@functools.lru_cache(maxsize=512)
def _composed(overrides: tuple[str, ...], root: Path, digest: str) -> dict[str, Any]:
    """:func:`_compose`, once per overrides and version of the config files (``digest``)."""
    return _compose(overrides, root)


def _compose(overrides: tuple[str, ...], root: Path) -> dict[str, Any]:
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    try:
        with initialize_config_dir(config_dir=str(root), version_base=None):
            cfg = hydra_compose(config_name="config", overrides=list(overrides))
    except (HydraException, OmegaConfBaseException) as error:  # a bad override: one line, naming it
        message = " ".join(str(error).split())
        unknown = re.search(r"Could not override '([^']+)'", message)
        if unknown:  # Hydra's hint ("use +key") would add a key nothing reads: name the key instead
            raise ConfigError(f"{unknown.group(1)}: no such setting in conf/ (check the name)") from error
        merging = re.fullmatch(r"Error merging override (\S+?)=.*", message)
        cause = error.__cause__
        if merging and isinstance(cause, OmegaConfBaseException):  # a knob class's type refused the value
            reason = str(cause).strip().splitlines()[0]  # below it: OmegaConf's full_key and class lines
            raise ConfigError(f"{merging.group(1)}: {reason}") from error
        raise ConfigError(f"settings {list(overrides)}: {message}") from error
    container = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(container, dict)
    return {str(k): v for k, v in container.items()}


def dataset_config(name: str, conf_dir: Path = CONF_DIR) -> dict[str, Any]:
    """One data set's config as ``-S dataset=<name>`` selects it (conf/dataset/<name>.yaml)."""
    path = conf_dir / "dataset" / f"{name}.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"no data set config {path}")
    return dict(compose([f"dataset={name}"], conf_dir)["dataset"])


def write_params(path: str | Path = "params.yaml", overrides: Sequence[str] = (), conf_dir: Path = CONF_DIR) -> None:
    """Compose conf/ into ``path`` exactly as ``dvc exp run`` does (DVC's own dumper)."""
    from dvc.utils.hydra import compose_and_dump

    compose_and_dump(Path(path), str(conf_dir.resolve()), None, "config", str(REPO_ROOT), list(overrides))


class ConfigError(ValueError, UserFacingError):
    """A setting has a value the code cannot use; the message names the setting."""


def setting(
    default: Any = dataclasses.MISSING,
    *,
    default_factory: Any = dataclasses.MISSING,
    minimum: float | None = None,
    maximum: float | None = None,
    above: float | None = None,
    choices: Sequence[Any] | None = None,
    scalar_ok: bool = False,
    empty_ok: bool = False,
    doc: str = "",
) -> Any:
    """A dataclass field with the checks :func:`typed` applies: ``minimum`` / ``maximum``
    (inclusive), ``above`` (exclusive), ``choices``; ``scalar_ok`` lets a sequence setting
    take one value (a sweep point, e.g. ``-S selfcheck_ngram.n=2``); a sequence setting may be
    an empty list only with ``empty_ok`` (an empty list of variants would run and evaluate
    nothing, without a word)."""
    metadata = {
        "minimum": minimum,
        "maximum": maximum,
        "above": above,
        "choices": None if choices is None else tuple(choices),
        "scalar_ok": scalar_ok,
        "empty_ok": empty_ok,
        "doc": doc,
    }
    if default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def _describe(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def _coerce(value: Any, hint: Any, name: str, meta: Mapping[str, Any]) -> Any:
    """Check ``value`` against the type ``hint``; returns the value in its canonical form."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for option in (a for a in args if a is not type(None)):
            try:
                return _coerce(value, option, name, meta)
            except ConfigError as error:
                errors.append(str(error))
        raise ConfigError(errors[0] if len(errors) == 1 else f"{name}: {_describe(value)} matches none of {args}")
    if origin is typing.Literal:
        if value not in args:
            raise ConfigError(f"{name}: {value!r} is not one of {list(args)}")
        return value
    if origin in (tuple, list, Sequence, collections.abc.Sequence):
        item_hint = args[0] if args else Any
        if isinstance(value, str) or not isinstance(value, list | tuple):
            if meta.get("scalar_ok") and value is not None:
                value = [value]
            else:
                raise ConfigError(f"{name}: expected a list, got {_describe(value)}")
        items = [_coerce(v, item_hint, f"{name}[{i}]", {}) for i, v in enumerate(value)]
        if not items and meta.get("empty_ok") is False:
            raise ConfigError(f"{name}: an empty list selects nothing; give at least one value")
        return tuple(items) if origin is tuple else items
    if origin in (dict, Mapping, collections.abc.Mapping):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{name}: expected a mapping, got {_describe(value)}")
        value_hint = args[1] if len(args) == 2 else Any
        return {str(k): _coerce(v, value_hint, f"{name}.{k}", {}) for k, v in value.items()}
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        if isinstance(value, hint):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"{name}: expected a mapping, got {_describe(value)}")
        return typed(hint, value, name)
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{name}: expected true or false, got {_describe(value)}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{name}: expected an integer, got {_describe(value)}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{name}: expected a number, got {_describe(value)}")
        if math.isnan(float(value)):
            raise ConfigError(f"{name}: NaN is not a usable value")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{name}: expected a string, got {_describe(value)}")
        return value
    if value is None and hint is type(None):
        return None
    raise ConfigError(f"{name}: cannot check a value against {hint!r}")


def _check_bounds(value: Any, name: str, meta: Mapping[str, Any]) -> None:
    numbers = value if isinstance(value, list | tuple) else [value]
    for number in numbers:
        if not isinstance(number, int | float) or isinstance(number, bool):
            continue
        if meta.get("minimum") is not None and number < meta["minimum"]:
            raise ConfigError(f"{name}: must be >= {meta['minimum']}, got {number!r}")
        if meta.get("maximum") is not None and number > meta["maximum"]:
            raise ConfigError(f"{name}: must be <= {meta['maximum']}, got {number!r}")
        if meta.get("above") is not None and number <= meta["above"]:
            raise ConfigError(f"{name}: must be > {meta['above']}, got {number!r}")
    choices = meta.get("choices")
    if choices is not None:
        for item in value if isinstance(value, list | tuple) else [value]:
            if item not in choices:
                raise ConfigError(f"{name}: {item!r} is not one of {list(choices)}")


def typed(cls: type[T], raw: Mapping[str, Any] | None, name: str) -> T:
    """Build the dataclass ``cls`` from a params section, checking every setting once.

    Unknown keys, wrong types (``n: 2.7`` for an int, ``num_samples: abc``), values out of
    range and invalid choices raise :class:`ConfigError` naming the setting as a user writes
    it (``selfcheck_ngram.n: expected an integer, got 2.7 (float)``). A check in the
    dataclass's ``__post_init__`` that raises ``ValueError`` is reported the same way.
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    raw = {} if raw is None else raw
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{name}: expected a mapping, got {_describe(raw)}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = [k for k in raw if k not in fields]
    if unknown:
        raise ConfigError(f"{name}: unknown setting(s) {unknown}; known: {sorted(fields)}")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        field_ = fields[key]
        meta: Mapping[str, Any] = field_.metadata or {}
        checked = _coerce(value, hints[key], f"{name}.{key}", meta)
        _check_bounds(checked, f"{name}.{key}", meta)
        values[key] = checked
    try:
        return cls(**values)
    except ConfigError:
        raise
    except (ValueError, TypeError) as error:
        raise ConfigError(f"{name}: {error}") from error


def dotted_value(tree: Mapping[str, Any], key: str) -> Any:
    """The value at the dotted ``key`` (``ccp.score.top_k``) of nested mappings; None where a
    part is absent or a value on the way is not a mapping."""
    node: Any = tree
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def covers(declared: str, key: str) -> bool:
    """Whether the params key ``declared`` covers ``key``: the same key, or a section above it
    (``ccp`` covers ``ccp.score.top_k``; ``ccp.score`` does not cover ``ccp``)."""
    return key == declared or key.startswith(declared + ".")


if __name__ == "__main__":  # python -m hallulab.core.config [overrides...] -> params.yaml
    import sys

    write_params("params.yaml", sys.argv[1:])
