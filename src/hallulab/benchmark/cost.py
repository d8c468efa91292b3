"""What a benchmark cell cost, read from the stage logs of its run (not estimated).

Every stage writes its run statistics to ``logs/<data set>/<stage>.json``
(:func:`hallulab.pipeline.runner.write_run_log`): its seconds and, per labelled model request
(an LLM role, NLI pairs, BERTScore pairs: :class:`hallulab.core.call_cache.RequestCost`), the distinct
calls, those computed in that run and the model seconds of all of them as timed when each
was computed. After a cell's run the runner keeps, beside its units
(``results/benchmark/<data set>/<method>.cost.json``):

* the machine (its CPU count and features) and the wall seconds of the whole cell run;
* for each stage the method's scores need (:meth:`hallulab.pipeline.graph.PipelineGraph.steps_for`:
  generate, the artifacts it reads, its score and aggregate steps; a combining method's members
  step, a copy of its members' scores that writes no log, aside), what that stage's log says
  if the stage ran in this cell's run, else that it did not run here (DVC found its outputs
  current, or restored them from its run-cache: their cost was paid by an earlier run and is
  not counted);
* the totals over the method's own stages that ran (all but ``generate``, which draws the
  responses and samples for every method of the data set and is reported once per data set):
  stage seconds, and per request label the calls and the model seconds; ``complete`` says
  whether every own stage ran in this run.

A combining method's members are other methods' steps, chosen by its settings: their cost is in
their own cells, which the table adds to the combining cell's
(:func:`hallulab.benchmark.table_file.with_members`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hallulab.core.call_cache import RequestCost
from hallulab.core.config import ConfigError
from hallulab.core.io import read_json, write_json
from hallulab.pipeline import paths
from hallulab.pipeline.graph import pipeline_graph
from hallulab.tooling.bench_record import machine

#: the stage a data set's cells share: it draws the responses and samples every method reads
SHARED_STAGE = "generate"


def _counted(stage: str) -> bool:
    """Whether a cell's cost lists this stage: not a combining method's members step, which
    copies its members' unit scores (their cost is in the members' own cells) and writes no run
    log, so it would always read as not run. Cost files that list one are read without it."""
    node = pipeline_graph().nodes.get(stage)
    return node is None or node.kind != "members"


def _requests(raw: Mapping[str, Mapping[str, Any]]) -> dict[str, RequestCost]:
    return {
        label: RequestCost(int(r["calls"]), int(r["computed"]), float(r["model_seconds"])) for label, r in raw.items()
    }


@dataclass(frozen=True)
class StageCost:
    """One stage of a cell: whether it ran in the cell's own run, and if so its log's figures."""

    ran: bool
    seconds: float = 0.0
    requests: dict[str, RequestCost] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        if not self.ran:
            return {"ran": False}
        requests = {label: cost.as_dict() for label, cost in self.requests.items()}
        return {"ran": True, "seconds": round(self.seconds, 3), "requests": requests}

    @classmethod
    def from_log(cls, log: Mapping[str, Any]) -> StageCost:
        cache = log.get("cache") or {}
        return cls(True, float(log["seconds"]), _requests(cache.get("requests", {})))

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> StageCost:
        if not raw["ran"]:
            return cls(False)
        return cls(True, float(raw["seconds"]), _requests(raw["requests"]))


@dataclass(frozen=True)
class CellCost:
    """A cell's cost record (the module docstring). Its totals are over the method's own stages
    that ran; ``generate`` (responses and samples drawn for every method of the data set) is
    kept in ``stages`` and shown once per data set."""

    machine: dict[str, Any]
    wall_seconds: float
    stages: dict[str, StageCost]

    def own(self) -> dict[str, StageCost]:
        """The method's own stages: all but ``generate``, which a data set's cells share."""
        return {name: stage for name, stage in self.stages.items() if name != SHARED_STAGE}

    @property
    def complete(self) -> bool:
        """Whether every one of the method's own stages ran in the cell's run."""
        return all(stage.ran for stage in self.own().values())

    @property
    def stage_seconds(self) -> float:
        return sum(stage.seconds for stage in self.own().values())

    @property
    def requests(self) -> dict[str, RequestCost]:
        """The own stages' model requests, summed per label."""
        total: dict[str, RequestCost] = {}
        for stage in self.own().values():
            for label, cost in stage.requests.items():
                found = total.setdefault(label, RequestCost())
                found.calls += cost.calls
                found.computed += cost.computed
                found.model_seconds += cost.model_seconds
        return total

    def to_dict(self) -> dict[str, Any]:
        return {
            "machine": self.machine,
            "wall_seconds": round(self.wall_seconds, 1),
            "complete": self.complete,
            "stage_seconds": round(self.stage_seconds, 3),
            "requests": {label: cost.as_dict() for label, cost in self.requests.items()},
            "stages": {name: stage.to_dict() for name, stage in self.stages.items()},
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> CellCost:
        stages = {name: StageCost.from_dict(stage) for name, stage in raw["stages"].items() if _counted(name)}
        return cls(dict(raw["machine"]), float(raw["wall_seconds"]), stages)


def cell_cost(method: str, dataset: str, started: float, wall_seconds: float, root: Path) -> CellCost:
    """The cost record of a cell whose run started at ``started`` (epoch seconds) in ``root``."""
    stages: dict[str, StageCost] = {}
    for node in pipeline_graph().steps_for(method):
        if not _counted(node.stage):
            continue
        path = root / paths.run_log(node.stage, dataset)
        log = read_json(path) if path.is_file() else None
        ran = log is not None and float(log.get("finished", 0.0)) >= started
        stages[node.stage] = StageCost.from_log(log) if ran and log is not None else StageCost(False)
    return CellCost(machine(), wall_seconds, stages)


def read_cell_cost(path: Path) -> CellCost:
    """A cost file; a damaged one is an error naming it."""
    try:
        return CellCost.from_dict(read_json(path))
    except (KeyError, TypeError, ValueError) as error:
        raise ConfigError(f"{path}: not a cell cost record ({error!r}): run the cell again") from error


class CellTimer:
    """Times one cell's run: ``with CellTimer() as timer: ...`` then ``timer.started`` / ``timer.seconds``."""

    def __enter__(self) -> CellTimer:
        self.started = time.time()
        self._began = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._began


def write_cell_cost(destination: Path, record: CellCost) -> None:
    destination.parent.mkdir(parents=True, exist_ok=True)
    write_json(destination, record.to_dict())
