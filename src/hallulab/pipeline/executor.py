"""One executor of the registered steps, for the DVC stages and the API alike.

A shared artifact's ``build``, a method's ``score`` and its ``aggregate`` run here, and only
here: the step found by the registry, its context built from what the caller read, the model
resources opened and closed around it, the returned value checked against the spec. The
``extract``, ``score`` and ``aggregate`` stage scripts read their inputs from files, call one
of these and write what it returns; :class:`hallulab.api.Detector` calls the same functions in
the DAG's order, with each value taking the round trip a stage file gives it. So a rule about
running a step (what the context holds, when resources close, how a raw value is checked) has
one home. The cheap step lives in :mod:`hallulab.pipeline.aggregate_step` (re-exported here),
so that the aggregate stage imports no model layer.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hallulab.core.call_cache import CallCache
from hallulab.data.schema import Record
from hallulab.pipeline import registry
from hallulab.pipeline.aggregate_step import aggregate_method
from hallulab.pipeline.context import BuildContext
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.resources import Resources
from hallulab.pipeline.spec import MethodSpec, StepInputs, StoredRaw

__all__ = ["StepRun", "aggregate_method", "build_artifact", "run_step", "score_inputs", "score_method"]


@dataclass(frozen=True)
class StepRun:
    """What a run of one step gave: its value and the statistics it recorded for the run log."""

    value: Any
    run_stats: dict[str, Any] = field(default_factory=dict)


def run_step(
    step: Any,
    dataset: str,
    records: Sequence[Record],
    inputs: Mapping[str, Any],
    view: ParamsView,
    cache: CallCache,
    log: logging.Logger,
) -> StepRun:
    """``step(context)`` with the model resources ``view`` configures, opened for it and closed
    after it, whatever happens (the generate step, which the API runs, goes through here too)."""
    resources = Resources(view, cache)
    try:
        context = BuildContext(dataset, records, inputs, view, resources, log)
        value = step(context)
    finally:
        resources.close()
    return StepRun(value, context.run_stats)


def build_artifact(
    name: str,
    dataset: str,
    records: Sequence[Record],
    inputs: Mapping[str, Any],
    view: ParamsView,
    cache: CallCache,
    log: logging.Logger,
) -> StepRun:
    """Shared artifact ``name`` built from ``records`` and the artifacts it requires (``inputs``)."""
    build = registry.step_function("artifact", name, "build")
    return run_step(build, dataset, records, inputs, view, cache, log)


def score_inputs(spec: MethodSpec) -> StepInputs:
    """What ``spec``'s score step reads; :class:`registry.MissingStepError` for a method without one."""
    if spec.score is None:
        raise registry.MissingStepError(
            f"method {spec.name!r} has no score step: its scores come from `dvc repro aggregate_{spec.name}`"
        )
    return spec.score


def score_method(
    spec: MethodSpec,
    dataset: str,
    records: Sequence[Record],
    artifacts: Mapping[str, Any],
    view: ParamsView,
    cache: CallCache,
    log: logging.Logger,
) -> StepRun:
    """A method's expensive step; the value is an instance of the spec's raw class (checked)."""
    score_inputs(spec)
    score = registry.step_function("method", spec.name, "score")
    run = run_step(score, dataset, records, artifacts, view, cache, log)
    checked: StoredRaw = spec.checked_raw(run.value)
    return StepRun(checked, run.run_stats)
