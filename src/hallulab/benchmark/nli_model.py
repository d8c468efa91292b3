"""The NLI model behind a table cell: which cells read one, and which model and recipe each used.

A cell is **NLI-bound** when its method reads the ``nli`` settings, read off its declarations
(:func:`reads_nli`): its score or aggregate step names ``nli`` among its params (SelfCheckGPT-NLI,
Semantic Entropy, CCP), or an artifact it requires does, directly or through the artifacts that
artifact is built from (the graph estimators' ``nli_pair_matrix``); a combining method (the
ensemble) is NLI-bound where one of the members it combines is.

The benchmark gives every NLI-bound cell the same NLI settings (``conf/benchmark.yaml``'s
``nli_settings``, :mod:`hallulab.benchmark.runs`), and each such cell names what it read
(:func:`nli_reading`): the NLI config (``nli.name``, ``nli.model``, ``nli.pair_order``) as its
results file records it, and, for the project's offline model (``nli.model`` is the folder the
``train_nli`` stage writes, :data:`hallulab.pipeline.paths.NLI_MODEL_DIR`), the recipe it was
trained with (``conf/nli_train/<recipe>.yaml``). A results file records the settings its
method's steps read, and the recipe is read by ``train_nli``, not by them: it is composed from
the cell's own ``-S`` settings as its run composed it (``dataset=<name>`` and its overrides;
without ``nli_train=...`` the profile's recipe, ``full`` under the papers' profile).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from hallulab.core.config import compose
from hallulab.pipeline.paths import NLI_MODEL_DIR
from hallulab.pipeline.spec import ArtifactSpec, MethodSpec

#: the params section an NLI-reading step names
NLI_SECTION = "nli"


def _artifact_reads_nli(name: str, artifacts: Mapping[str, ArtifactSpec], seen: frozenset[str] = frozenset()) -> bool:
    spec = artifacts.get(name)
    if spec is None:  # a file the generate step writes (main_tokens), not an artifact
        return False
    if NLI_SECTION in {key.split(".")[0] for key in spec.inputs.params}:
        return True
    return any(_artifact_reads_nli(other, artifacts, seen | {name}) for other in spec.requires if other not in seen)


def reads_nli(
    spec: MethodSpec,
    artifacts: Mapping[str, ArtifactSpec],
    methods: Mapping[str, MethodSpec] | None = None,
    members: Sequence[str] = (),
) -> bool:
    """Whether a cell of ``spec`` reads an NLI model (the module docstring's rule); for a
    combining method, ``members`` are the methods it combines (``methods``: every registered one)."""
    steps = [spec.aggregate, *([spec.score] if spec.score is not None else [])]
    if any(NLI_SECTION in {key.split(".")[0] for key in step.params} for step in steps):
        return True
    if any(_artifact_reads_nli(name, artifacts) for name in spec.requires):
        return True
    if spec.combines is not None and methods is not None:
        return any(reads_nli(methods[member], artifacts, methods) for member in members if member in methods)
    return False


@dataclass(frozen=True)
class NliReading:
    """The NLI model a cell read: its config's name, model and pair order, and for the offline
    model the recipe it was trained with (None for a hub model)."""

    name: str
    model: str
    pair_order: str
    recipe: str | None = None

    def text(self) -> str:
        """``minilm_offline, recipe swaps_wide, sample first`` (a hub model: its model id)."""
        order = self.pair_order.replace("_", " ")
        if self.recipe is not None:
            return f"{self.name}, recipe {self.recipe}, {order}"
        return f"{self.name} ({self.model}), {order}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model, "pair_order": self.pair_order, "recipe": self.recipe}


#: the settings that choose the NLI model and its recipe (a ``-S`` key, or the group it sets)
_NLI_KEYS = ("nli", "nli_train", "profile")


def _chooses_nli(setting: str) -> bool:
    key = setting.split("=", 1)[0].lstrip("+~")
    return key.split(".", 1)[0] in _NLI_KEYS


@cache
def _composed(dataset: str, overrides: tuple[str, ...]) -> tuple[dict[str, Any], str | None]:
    """The ``nli`` section and the NLI recipe's name as a run with these settings composes them
    (only the settings that choose them are composed: another one a later config no longer has
    changes neither)."""
    params = compose([f"dataset={dataset}", *(setting for setting in overrides if _chooses_nli(setting))])
    recipe = params.get("nli_train") or {}
    return dict(params.get(NLI_SECTION) or {}), (None if not recipe else str(recipe.get("profile")))


def nli_reading(dataset: str, overrides: Sequence[str], recorded: Mapping[str, Any] | None = None) -> NliReading:
    """The NLI model of a cell run on ``dataset`` with ``overrides`` (its results file's
    ``overrides``); ``recorded``: its results file's ``params.nli`` where it has one (what the
    run read), else the composed section."""
    composed, recipe = _composed(dataset, tuple(overrides))
    section = dict(recorded) if recorded else composed
    model = str(section.get("model"))
    return NliReading(
        name=str(section.get("name")),
        model=model,
        pair_order=str(section.get("pair_order", "sentence_first")),
        recipe=recipe if model == NLI_MODEL_DIR else None,
    )
