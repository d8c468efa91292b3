"""What a step receives and returns. Steps are pure: data in, data out; stages do the files."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import pandas as pd

from hallulab.data.schema import Record
from hallulab.pipeline.controls import CONTROL_FIELDS, AggregateControls
from hallulab.pipeline.params import ParamsView

if TYPE_CHECKING:  # the expensive steps' resources; cheap steps never import them
    from hallulab.pipeline.resources import Resources
    from hallulab.pipeline.spec import StoredRaw

#: The raw class an aggregate step reads (its spec's ``raw``), or None for a method without a
#: score step: ``AggregateContext[HalluCheckScores]``, ``AggregateContext[None]``.
RawT = TypeVar("RawT", bound="StoredRaw | None")


@dataclass
class BuildContext:
    """Input of an artifact's ``build`` and a method's ``score`` step."""

    dataset: str
    records: Sequence[Record]
    artifacts: Mapping[str, Any]
    params: ParamsView
    resources: Resources
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("hallulab.step"))
    #: Run statistics of this run (seconds, ...): the stage writes them to its run log
    #: (``logs/``), never into an output, so the same inputs give byte-identical outputs.
    run_stats: dict[str, Any] = field(default_factory=dict)


@dataclass
class AggregateContext(Generic[RawT]):
    """Input of a method's cheap ``aggregate`` step: the records, the artifacts it requires,
    what its ``score`` step stored (None for methods without one) and the sweep knobs.

    A step is annotated with its raw class, ``aggregate(ctx: AggregateContext[CCPScores])``
    (``AggregateContext[None]`` without a score step), and reads ``ctx.raw`` as that class with
    no check of its own: the stages build the context from
    :meth:`hallulab.pipeline.spec.MethodSpec.read_raw`, which checks the instance once."""

    dataset: str
    records: Sequence[Record]
    artifacts: Mapping[str, Any]
    raw: RawT  # an instance of the method's raw class (spec.raw), or None without a score step
    params: ParamsView
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("hallulab.step"))
    #: a combining method's members (spec.combines): ``"<method>/<variant>"`` -> that
    #: variant's unit scores at the combined level, in the order the settings list them
    members: Mapping[str, pd.DataFrame] = field(default_factory=dict)


@dataclass
class Aggregated:
    """Unit-level scores (:mod:`hallulab.core.units`), the counts the paper's handling rules
    produced (parse failures, fallbacks ...), reported beside the metrics, and the
    :class:`AggregateControls` later stages read (never keys of ``diagnostics``)."""

    scores: pd.DataFrame
    diagnostics: dict[str, Any] = field(default_factory=dict)
    controls: AggregateControls = field(default_factory=AggregateControls)
    #: what the report shows beside each unit (:data:`hallulab.core.units.DETAIL_COLUMNS`),
    #: computed here where the scores are, so that nothing downstream recomputes them
    details: pd.DataFrame | None = None

    def record(self) -> dict[str, Any]:
        """The ``.diagnostics.json`` record (for people); the controls are a file of their own."""
        clash = [k for k in CONTROL_FIELDS if k in self.diagnostics]
        if clash:
            raise ValueError(f"diagnostics may not hold {clash}: set them on Aggregated.controls")
        return dict(self.diagnostics)
