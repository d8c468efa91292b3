"""What a benchmark cell cost, read from the stage logs of its run (not estimated).

Every stage writes its run statistics to ``logs/<data set>/<stage>.json``
(:func:`hallulab.pipeline.runner.write_run_log`): its seconds and, per labelled model request
(an LLM role, NLI pairs, BERTScore pairs: :class:`hallulab.cache.RequestCost`), the distinct
calls, those computed in that run and the model seconds of all of them as measured when each
was computed. After a cell's run the runner keeps, beside its results file
(``benchmark_<method>.cost.json``):

* the machine (its CPU count and features) and the wall seconds of the whole cell run;
* for each stage the method's scores need (:meth:`hallulab.pipeline.graph.PipelineGraph.steps_for`:
  generate, the artifacts it reads, its score and aggregate steps), what that stage's log says
  if the stage ran in this cell's run, else that it did not run here (DVC found its outputs
  current, or restored them from its run-cache: their cost was paid by an earlier run and is
  not counted);
* the totals over the stages that ran: stage seconds, and per request label the calls and the
  model seconds; ``complete`` says whether every stage ran in this run.

A combining method's members are other methods' steps, chosen by its settings: their cost is in
their own cells.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hallulab.core.io import read_json, write_json
from hallulab.pipeline import paths
from hallulab.pipeline.graph import pipeline_graph
from hallulab.tooling.bench_record import machine


def _stage_cost(log: Mapping[str, Any]) -> dict[str, Any]:
    cache = log.get("cache") or {}
    return {"ran": True, "seconds": round(float(log.get("seconds", 0.0)), 3), "requests": cache.get("requests", {})}


def cell_cost(method: str, dataset: str, started: float, wall_seconds: float, root: Path) -> dict[str, Any]:
    """The cost record of a cell whose run started at ``started`` (epoch seconds) in ``root``."""
    stages: dict[str, Any] = {}
    for node in pipeline_graph().steps_for(method):
        path = root / paths.run_log(node.stage, dataset)
        log = read_json(path) if path.is_file() else None
        ran = log is not None and float(log.get("finished", 0.0)) >= started
        stages[node.stage] = _stage_cost(log) if ran and log is not None else {"ran": False}
    requests: dict[str, dict[str, float]] = {}
    for stage in stages.values():
        for label, cost in stage.get("requests", {}).items():
            total = requests.setdefault(label, {"calls": 0, "computed": 0, "model_seconds": 0.0})
            for key in total:
                total[key] = round(total[key] + cost.get(key, 0), 3)
    return {
        "machine": machine(),
        "wall_seconds": round(wall_seconds, 1),
        "complete": all(stage["ran"] for stage in stages.values()),
        "stage_seconds": round(sum(stage.get("seconds", 0.0) for stage in stages.values()), 3),
        "requests": requests,
        "stages": stages,
    }


class CellTimer:
    """Times one cell's run: ``with CellTimer() as timer: ...`` then ``timer.started`` / ``timer.seconds``."""

    def __enter__(self) -> CellTimer:
        self.started = time.time()
        self._began = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._began


def write_cell_cost(destination: Path, record: Mapping[str, Any]) -> None:
    destination.parent.mkdir(parents=True, exist_ok=True)
    write_json(destination, dict(record))
