"""A read-only view of the composed params that only serves what a step declared.

DVC re-runs a stage when a param it lists changes; a step that quietly read another
param would serve stale results after that param changed. :class:`ParamsView` makes the
declaration binding: reading a key outside the declared ones raises
:class:`UndeclaredParamError`, which names the step, the key and where to declare it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from omegaconf import DictConfig, OmegaConf

from hallulab.core.config import ConfigError, covers, load_params, typed
from hallulab.core.errors import UserFacingError

T = TypeVar("T")


class UndeclaredParamError(KeyError, UserFacingError):
    """A step read a param its spec does not list."""

    def __str__(self) -> str:
        return str(self.args[0])


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
        """A stage's view of ``params.yaml``, once the schemas of the knob sections it reads
        accept them (:func:`hallulab.pipeline.settings_schema.check_sections`, importing only
        those classes): ``-S '+samples.temperature=0.5'`` is refused in one line naming the key,
        not silently ignored. The ``code_files`` stage has checked every setting before."""
        from hallulab.pipeline.settings_schema import check_sections

        params = load_params(path)
        view = cls(params, declared, owner)
        container = OmegaConf.to_container(params, resolve=False)
        assert isinstance(container, dict)
        check_sections({str(k): v for k, v in container.items()}, view.declared)
        return view

    def get(self, key: str) -> Any:
        if not any(covers(d, key) for d in self.declared):
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
