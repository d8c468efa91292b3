"""A read-only view of the composed params that only serves what a step declared.

DVC re-runs a stage when a param it lists changes; a step that quietly read another
param would serve stale results after that param changed. :class:`ParamsView` makes the
declaration binding: reading a key outside the declared ones raises
:class:`UndeclaredParamError`, which names the step, the key and where to declare it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from omegaconf import DictConfig, OmegaConf

from hallulab.core.config import ConfigError, load_params, typed
from hallulab.core.errors import UserFacingError

T = TypeVar("T")


class UndeclaredParamError(KeyError, UserFacingError):
    """A step read a param its spec does not list."""

    def __str__(self) -> str:
        return str(self.args[0])


def _covers(declared: str, key: str) -> bool:
    return key == declared or key.startswith(declared + ".")


class ParamsView:
    """``get("a.b")`` for declared keys (a declared ``a`` covers ``a.b``; ``a.b`` does not cover ``a``)."""

    def __init__(self, params: DictConfig | Mapping[str, Any], declared: Iterable[str], owner: str) -> None:
        self._params = params if isinstance(params, DictConfig) else OmegaConf.create(dict(params))
        self.owner = owner
        self.declared = tuple(self._resolve_template(key) for key in declared)

    def _resolve_template(self, key: str) -> str:
        """``llm_catalogue.${llms.evaluator}`` -> ``llm_catalogue.smollm2`` (as DVC resolves it)."""
        while "${" in key:
            start = key.index("${")
            end = key.index("}", start)
            inner = key[start + 2 : end]
            value = self._raw(inner)
            key = key[:start] + str(value) + key[end + 1 :]
        return key

    def _raw(self, key: str) -> Any:
        node: Any = self._params
        for part in key.split("."):
            if not isinstance(node, DictConfig) or part not in node:
                raise ConfigError(f"params has no setting {key!r}; is conf/ composed into params.yaml (make params)?")
            node = node[part]
        return node

    @classmethod
    def load(cls, path: str, declared: Iterable[str], owner: str) -> ParamsView:
        """A stage's view of ``params.yaml``; every setting in it must be one that ``conf/``
        defines, and in a knob section the stage reads, one its class declares
        (:mod:`hallulab.pipeline.known_keys`: ``-S '+samples.temperature=0.5'`` is refused, not
        silently ignored). Only the classes of the sections read are imported."""
        from hallulab.core.config import CONF_DIR
        from hallulab.pipeline.known_keys import check_known, schema_sections
        from hallulab.pipeline.settings_schema import section_fields

        params = load_params(path)
        beside = Path(path).resolve().parent / "conf"  # the conf/ that composed this params.yaml
        conf = beside if (beside / "config.yaml").is_file() else CONF_DIR
        container = OmegaConf.to_container(params, resolve=False)
        assert isinstance(container, dict)
        view = cls(params, declared, owner)
        fields = {}
        for section in schema_sections(conf):
            if any(_covers(key, section) or _covers(section, key) for key in view.declared):
                names = section_fields(section)
                if names is not None:
                    fields[section] = names
        check_known({str(k): v for k, v in container.items()}, [str(k) for k in container], conf, fields)
        return view

    def get(self, key: str) -> Any:
        if not any(_covers(d, key) for d in self.declared):
            raise UndeclaredParamError(
                f"{self.owner} reads params key {key!r} but declares only {list(self.declared)}; "
                "add it to the step's inputs in its spec (and regenerate dvc.yaml: make dvcyaml)"
            )
        node = self._raw(key)
        return OmegaConf.to_container(node, resolve=True) if OmegaConf.is_config(node) else node

    def typed(self, cls: type[T], key: str) -> T:
        """The section ``key`` checked into the dataclass ``cls`` (:func:`hallulab.core.config.typed`)."""
        return typed(cls, self.get(key), key)

    def has(self, key: str) -> bool:
        node: Any = self._params
        for part in key.split("."):
            if not isinstance(node, DictConfig) or part not in node:
                return False
            node = node[part]
        return True
