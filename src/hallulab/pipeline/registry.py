"""Discovery of registered methods and shared artifacts.

A method is a subpackage of :mod:`hallulab.methods` whose ``__init__`` defines ``SPEC`` (a
:class:`~hallulab.pipeline.spec.MethodSpec`); an artifact is a subpackage of
:mod:`hallulab.artifacts` with an :class:`~hallulab.pipeline.spec.ArtifactSpec` ``SPEC``.
Nothing lists them by hand: adding a package registers it.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType
from typing import Any

from hallulab.core.errors import UserFacingError
from hallulab.pipeline.spec import ArtifactSpec, KnobSection, MethodSpec

METHODS_PACKAGE = "hallulab.methods"
ARTIFACTS_PACKAGE = "hallulab.artifacts"


class UnknownNameError(KeyError, UserFacingError):
    """A method or artifact name that is not registered (``--method`` / ``--artifact``)."""

    def __str__(self) -> str:
        return str(self.args[0])


class MissingStepError(ValueError, UserFacingError):
    """A stage asked for a step the method does not have (``score.py --method greybox``)."""


def _subpackages(package: str) -> list[str]:
    module = importlib.import_module(package)
    return sorted(info.name for info in pkgutil.iter_modules(module.__path__) if info.ispkg)


@cache
def methods() -> dict[str, MethodSpec]:
    """Every registered method, in listing order (``order``, then name)."""
    found: list[MethodSpec] = []
    for name in _subpackages(METHODS_PACKAGE):
        spec = getattr(importlib.import_module(f"{METHODS_PACKAGE}.{name}"), "SPEC", None)
        if isinstance(spec, MethodSpec):
            if spec.name != name:
                raise ValueError(
                    f"{METHODS_PACKAGE}.{name}: SPEC.name is {spec.name!r}; it must equal the package name"
                )
            found.append(spec)
    return {spec.name: spec for spec in sorted(found, key=lambda s: (s.order, s.name))}


@cache
def artifacts() -> dict[str, ArtifactSpec]:
    """Every registered shared artifact, by name."""
    found: dict[str, ArtifactSpec] = {}
    for name in _subpackages(ARTIFACTS_PACKAGE):
        spec = getattr(importlib.import_module(f"{ARTIFACTS_PACKAGE}.{name}"), "SPEC", None)
        if isinstance(spec, ArtifactSpec):
            if spec.name != name:
                raise ValueError(
                    f"{ARTIFACTS_PACKAGE}.{name}: SPEC.name is {spec.name!r}; it must equal the package name"
                )
            found[name] = spec
    return found


def _one(package: str, name: str, kind: type) -> Any:
    """One registered package's SPEC, importing only that package (a stage runs the code of
    its own method, nothing else)."""
    if name not in _subpackages(package):
        raise UnknownNameError(f"unknown {kind.__name__[:-4].lower()} {name!r}; registered: {_subpackages(package)}")
    spec = getattr(importlib.import_module(f"{package}.{name}"), "SPEC", None)
    if not isinstance(spec, kind):
        raise KeyError(f"{package}.{name} defines no {kind.__name__} SPEC")
    return spec


def method_names() -> list[str]:
    """The registered methods' names, sorted, without importing them (a stage that only checks
    a name imports nothing it does not run)."""
    return _subpackages(METHODS_PACKAGE)


def check_method_name(name: str, setting: str | None = None) -> None:
    """Refuse an unregistered method name (given as ``--method``, or as the setting named),
    importing no method: a stage calls this before it reads an input, so a typo is named
    before a missing file is."""
    if name not in method_names():
        where = f"{setting}: " if setting else ""
        raise UnknownNameError(f"{where}unknown method {name!r}; registered: {method_names()}")


def method(name: str) -> MethodSpec:
    return _one(METHODS_PACKAGE, name, MethodSpec)


def artifact(name: str) -> ArtifactSpec:
    return _one(ARTIFACTS_PACKAGE, name, ArtifactSpec)


def step_module(kind: str, name: str, step: str) -> ModuleType:
    """``hallulab.methods.<name>.<step>`` (kind "method") or ``hallulab.artifacts.<name>.build``."""
    package = METHODS_PACKAGE if kind == "method" else ARTIFACTS_PACKAGE
    return importlib.import_module(f"{package}.{name}.{step}")


def step_function(kind: str, name: str, step: str) -> Any:
    module = step_module(kind, name, step)
    function = getattr(module, step, None)
    if function is None:
        raise AttributeError(f"{module.__name__} defines no {step}() function")
    return function


def knob_sections() -> dict[str, tuple[type, KnobSection]]:
    """Every knob section the registered methods and artifacts declare, with its class
    (imported here, not by the declaring package's ``__init__``): section -> (class, declaration)."""
    found: dict[str, tuple[type, KnobSection]] = {}
    owners: list[tuple[str, MethodSpec | ArtifactSpec]] = [(METHODS_PACKAGE, spec) for spec in methods().values()]
    owners += [(ARTIFACTS_PACKAGE, spec) for spec in artifacts().values()]
    for package, spec in owners:
        for knob in spec.knobs:
            module, _, name = knob.cls.partition(":")
            cls = getattr(importlib.import_module(f"{package}.{spec.name}.{module}"), name)
            if knob.section in found:
                raise ValueError(f"knob section {knob.section!r} is declared twice ({spec.name})")
            found[knob.section] = (cls, knob)
    return found
