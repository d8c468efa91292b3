"""``results/benchmark.json``: the statistics of every filled cell, the best of each
column and every cell's paired comparisons, computed from the committed units files alone.

    python -m hallulab.benchmark table      # (make benchmark runs it after the cells)

For every benchmark data set (a column) and every filled row (a method's benchmark variant with
its units file, :mod:`hallulab.benchmark.units`), the cell's ROC-AUC, PR-AUC and PRR with their
intervals (:mod:`hallulab.benchmark.statistics`). Within a column, cells at the same level are
compared: for each metric the row of the highest value among the cells not model-limited is the
column's best, and every other row gets its paired difference against it (``vs_best``) and
against the trivial baseline's row (``vs_baseline``: the method whose spec says
``trivial_baseline``, unit length), each with its verdict: ``better``, ``worse`` or ``tied`` (the
interval holds 0). Each cell says whether it measures its method or the model that filled the
method's LLM role (:mod:`hallulab.benchmark.validity`: its ``flat_share``, its ``roles``' success
rates, its ``verdict``, ``valid`` or ``model-limited``, and the ``reason`` in words); a
model-limited cell keeps its numbers and its comparisons but is never a column's best. The random scorer's expected
values are there too: ROC-AUC 50, PRR 0 and PR-AUC the positive rate. Beside the columns,
``total`` says what the whole table costs (:func:`whole_table`).

Three fields say what a cell can be set against and what it read, each where it applies:
``paper``, the published number of a paper that scored the same thing, with the cell scored
by the paper's own metric (:mod:`hallulab.benchmark.paper_numbers`); ``nli``, the NLI model and
training recipe of a cell that reads one (:mod:`hallulab.benchmark.nli_model`); ``members``, a
combining cell's candidate members, each with its own cell's verdict, the members its run
combined and those its next run combines (:mod:`hallulab.benchmark.member_choice`).

The file is re-derived by its command from committed files; a test recomputes it. A units file
it cannot take whole (not UTF-8, emptied, a unit listed twice, a score that is no finite number:
:func:`~hallulab.benchmark.units.read_units`), or one missing for a cell whose results or cost
file says it ran, is refused with one line naming it (exit status 2), never left out quietly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hallulab.benchmark.cost import SHARED_STAGE, CellCost, StageCost, read_cell_cost
from hallulab.benchmark.nli_model import nli_reading
from hallulab.benchmark.paper_numbers import pairing_for, paper_entry
from hallulab.benchmark.statistics import METRICS, CellStatistics, Comparison, cell_statistics, paired
from hallulab.benchmark.table import TableCell, TableRow
from hallulab.benchmark.units import CellUnits, read_units
from hallulab.benchmark.validity import CellVerdict, bounds, cell_verdict
from hallulab.core.call_cache import RequestCost
from hallulab.core.config import ConfigError
from hallulab.core.io import read_json, write_json
from hallulab.evaluation.protocol import ProtocolKnobs
from hallulab.pipeline.members import Member, parse_members
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.spec import MethodSpec
from hallulab.results.published import PublishedResult, result_path

TABLE_FILE = Path("results/benchmark.json")


@dataclass(frozen=True)
class Versus:
    """A paired comparison against one other row of the column, with its verdict."""

    row: str
    comparison: Comparison

    def to_dict(self, metric: str) -> dict[str, Any]:
        return {
            "row": self.row,
            "difference": self.comparison.differences[metric].to_list(),
            "units": self.comparison.units,
            "records": self.comparison.records,
            "verdict": self.comparison.verdict(metric),
        }


@dataclass(frozen=True)
class Entry:
    """One filled cell: its statistics, per metric its comparisons, and its verdict (None:
    not judged, as a column built from units alone)."""

    statistics: CellStatistics
    vs_best: dict[str, Versus] = field(default_factory=dict)
    vs_baseline: dict[str, Versus] = field(default_factory=dict)
    verdict: CellVerdict | None = None

    def to_dict(self) -> dict[str, Any]:
        stats = self.statistics
        return {
            "level": stats.level,
            "units": stats.units,
            "records": stats.records,
            "positives": stats.positives,
            "metrics": {name: estimate.to_list() for name, estimate in stats.metrics.items()},
            "vs_best": {metric: versus.to_dict(metric) for metric, versus in self.vs_best.items()},
            "vs_baseline": {metric: versus.to_dict(metric) for metric, versus in self.vs_baseline.items()},
            **({} if self.verdict is None else self.verdict.to_dict()),
        }


def row_key(row: TableRow) -> str:
    return f"{row.method}/{row.variant}"


def _best(entries: Mapping[str, CellStatistics], metric: str) -> str | None:
    """The row of the highest point value (the first in row order on a tie) among ``entries``
    (the column's cells not model-limited). The values are each cell's own: a cell that calls
    an LLM runs on a subset, so the best is chosen across unit sets, and the paired comparison
    against it then uses the units both scored."""
    defined = [(key, stats.metrics[metric].point) for key, stats in entries.items()]
    found = [(key, value) for key, value in defined if value is not None]
    return max(found, key=lambda item: item[1])[0] if found else None


@dataclass(frozen=True)
class Column:
    """One column's entries, and per level the best row of each metric and the baseline's row."""

    entries: dict[str, Entry]
    best: dict[str, dict[str, str | None]]
    baseline: dict[str, str]


def column_entries(
    units: Mapping[str, CellUnits],
    baselines: Sequence[str],
    cfg: ProtocolKnobs,
    verdicts: Mapping[str, CellVerdict] | None = None,
) -> Column:
    """Every row's entry in one column with its comparisons; ``verdicts`` (row -> its
    :class:`~hallulab.benchmark.validity.CellVerdict`) keep the model-limited rows from being a
    level's best and go into their entries."""
    verdicts = verdicts or {}
    statistics = {key: cell_statistics(found, cfg) for key, found in units.items()}
    entries: dict[str, Entry] = {}
    best_by_level: dict[str, dict[str, str | None]] = {}
    baseline_by_level: dict[str, str] = {}
    for level in dict.fromkeys(found.level for found in units.values()):
        at_level = {key: stats for key, stats in statistics.items() if stats.level == level}
        eligible = {key: stats for key, stats in at_level.items() if key not in verdicts or not verdicts[key].limited}
        best = {metric: _best(eligible, metric) for metric in METRICS}
        best_by_level[level] = best
        baseline = next((key for key in at_level if key in baselines), None)
        if baseline is not None:
            baseline_by_level[level] = baseline
        for key, stats in at_level.items():
            against = {
                other: paired(units[key], units[other], cfg)
                for other in dict.fromkeys(best.values())
                if other is not None and other != key
            }
            vs_best = {
                metric: Versus(other, against[other])
                for metric, other in best.items()
                if other is not None and other != key
            }
            vs_baseline = {}
            if baseline is not None and baseline != key:
                comparison = paired(units[key], units[baseline], cfg)
                vs_baseline = {metric: Versus(baseline, comparison) for metric in METRICS}
            entries[key] = Entry(stats, vs_best, vs_baseline, verdicts.get(key))
    return Column(entries, best_by_level, baseline_by_level)


def per_thousand_units(cost: CellCost | None, units: int) -> dict[str, Any] | None:
    """A cell's cost (:mod:`hallulab.benchmark.cost`) per 1,000 of its labelled units (the
    figures of :func:`_scaled`; per request label too), whether every stage it needs ran in the
    cell's own run, and ``cached_percent``: the share of its own stages' calls the call cache
    served (computed by an earlier run, so not in the run's stage seconds; ``seconds`` adds
    them back at their recorded model seconds)."""
    if cost is None or units == 0:
        return None
    scale = 1000.0 / units
    requests = cost.requests
    return {
        "complete": cost.complete,
        "cached_percent": _cached_percent(requests),
        **_scaled(cost.stage_seconds, requests, scale),
        "requests": {
            label: {"calls": round(scale * r.calls, 1), "model_seconds": round(scale * r.model_seconds, 2)}
            for label, r in requests.items()
        },
    }


def combined_members(spec: MethodSpec, params: Mapping[str, Any], where: str) -> tuple[Member, ...]:
    """The members a combining method's run combined: its member list at the params key
    ``spec.combines`` of its results file (``where`` names it), read and checked as the
    pipeline reads it (:class:`~hallulab.pipeline.params.ParamsView`,
    :func:`~hallulab.pipeline.members.parse_members`)."""
    assert spec.combines is not None
    value = ParamsView(params, (spec.combines,), where).get(spec.combines)
    return tuple(parse_members(value, f"{where}: {spec.combines}", spec.name))


def member_methods(spec: MethodSpec, params: Mapping[str, Any], where: str) -> tuple[str, ...]:
    """The methods a combining method's run combined (:func:`combined_members`), each once, in order."""
    return tuple(dict.fromkeys(member.method for member in combined_members(spec, params, where)))


def with_members(
    own: dict[str, Any] | None, members: Sequence[str], method_costs: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any] | None:
    """A combining cell's cost with what running it costs: its members' cells' costs per 1,000
    units (each per 1,000 of that cell's own units at the same level) added to its own, in total
    and per request label, under ``members``. ``complete`` there says whether every member has
    a cell cost and each is complete (the combining cell's own flag stays on its own figures);
    ``missing`` names those with none; ``cached_percent`` is the share of all those calls the
    call cache served in their cells' runs."""
    if own is None:
        return None
    found = [method_costs[method] for method in members if method in method_costs]
    missing = [method for method in members if method not in method_costs]
    total = {
        name: round(float(own[name]) + sum(float(cost[name]) for cost in found), 2)
        for name in ("seconds", "stage_seconds", "cached_seconds", "model_calls", "model_seconds")
    }
    requests: dict[str, dict[str, float]] = {}
    for cost in (own, *found):
        for label, request in cost.get("requests", {}).items():
            summed = requests.setdefault(label, {"calls": 0.0, "model_seconds": 0.0})
            for name in summed:
                summed[name] = round(summed[name] + float(request[name]), 2)
    complete = not missing and all(bool(cost["complete"]) for cost in found)
    cached = sum(float(cost.get("cached_percent") or 0.0) * float(cost["model_calls"]) for cost in (own, *found))
    cached_percent = 0.0 if total["model_calls"] == 0 else round(cached / total["model_calls"], 1)
    members_cost = {
        "methods": list(members),
        "missing": missing,
        "complete": complete,
        "cached_percent": cached_percent,
        **total,
        "requests": requests,
    }
    return {**own, "members": members_cost}


def _scaled(stage_seconds: float, requests: Mapping[str, RequestCost], scale: float) -> dict[str, float]:
    """A cost's figures, each times ``scale`` (per 1,000 units or records).

    ``stage_seconds``: what the run's stages took. ``cached_seconds``: what the calls the call
    cache served took when an earlier run computed them, each request's recorded model seconds
    in proportion to its calls served from the cache, c_cached / c x s_model (exact when a
    request is all served or all computed). ``seconds``: their sum, the cost of the same work
    with an empty call cache, which the table shows. ``model_calls``, ``model_seconds``: every
    call, at its recorded seconds."""
    cached = sum(r.model_seconds * (r.calls - r.computed) / r.calls for r in requests.values() if r.calls)
    return {
        "seconds": round(scale * (stage_seconds + cached), 2),
        "stage_seconds": round(scale * stage_seconds, 2),
        "cached_seconds": round(scale * cached, 2),
        "model_calls": round(scale * sum(r.calls for r in requests.values()), 1),
        "model_seconds": round(scale * sum(r.model_seconds for r in requests.values()), 2),
    }


def shared_generation(costs: Mapping[str, CellCost], entries: Mapping[str, Entry]) -> dict[str, Any] | None:
    """The ``generate`` stage's cost per 1,000 records (it draws the responses and samples every
    cell of the data set reads), from the cell whose run computed the most of its model calls:
    a later run that found them in the call cache took seconds, not what drawing them costs.
    Ties go to the first such cell in table order. ``cached_percent``: the share of that run's
    calls read from the call cache (``seconds`` counts them at their recorded model seconds)."""
    return _generation_row(_generating_run(costs, entries))


def _generation_row(chosen: tuple[str, StageCost, int] | None) -> dict[str, Any] | None:
    """:func:`shared_generation`'s figures of the run :func:`_generating_run` chose."""
    if chosen is None:
        return None
    key, stage, records = chosen
    scaled = _scaled(stage.seconds, stage.requests, 1000.0 / records)
    return {"cell": key, "records": records, **scaled, "cached_percent": _cached_percent(stage.requests)}


def _generating_run(costs: Mapping[str, CellCost], entries: Mapping[str, Entry]) -> tuple[str, StageCost, int] | None:
    """The cell (its row key), ``generate`` stage and records of :func:`shared_generation`."""
    chosen: tuple[str, StageCost, int] | None = None
    for key, cost in costs.items():
        stage = cost.stages.get(SHARED_STAGE)
        records = entries[key].statistics.records if key in entries else 0
        if stage is None or not stage.ran or records == 0:
            continue
        if chosen is None or _computed(stage) > _computed(chosen[1]):
            chosen = (key, stage, records)
    return chosen


def whole_table(cells: Mapping[str, Sequence[CellCost]], generations: Sequence[StageCost]) -> dict[str, Any]:
    """What the whole table costs, summed over its cells (per data set, each method once, however
    many variants it shows) and each data set's ``generate`` run (:func:`shared_generation`'s),
    in seconds, not per 1,000 units:

    * ``seconds``: with an empty call cache, the cells' own stages (each stage counted in the cell
      whose run ran it: a stage a later cell found current is not counted twice) with their cached
      calls at their recorded seconds (:func:`_scaled`), plus the ``generate`` runs likewise;
      ``stage_seconds``, ``cached_seconds`` and ``generate_seconds`` are its parts;
    * ``wall_seconds``: what the cells' runs took from start to end as they were made (DVC's own
      work included, the call cache as each run found it);
    * ``cells``; ``partial``, the cells whose run skipped an own stage; ``uncounted``, those
      stages (``<data set>/<stage>``) that no cell of the data set ran (an earlier run outside the
      table made them), so that ``seconds`` is a lower bound; ``cpus``, the CPU counts of the
      machines that ran the cells."""
    every = [cell for found in cells.values() for cell in found]
    own = [_scaled(cell.stage_seconds, cell.requests, 1.0) for cell in every]
    generated = [_scaled(stage.seconds, stage.requests, 1.0) for stage in generations]
    stage_seconds = sum(found["stage_seconds"] for found in own)
    cached_seconds = sum(found["cached_seconds"] for found in own)
    generate_seconds = sum(found["seconds"] for found in generated)
    uncounted = []
    for dataset, found in cells.items():
        ran: set[str] = set()
        skipped: set[str] = set()
        for cell in found:
            for name, stage in cell.own().items():
                (ran if stage.ran else skipped).add(name)
        uncounted += [f"{dataset}/{name}" for name in sorted(skipped - ran)]
    return {
        "cells": len(every),
        "partial": sum(not cell.complete for cell in every),
        "uncounted": uncounted,
        "seconds": round(stage_seconds + cached_seconds + generate_seconds, 1),
        "stage_seconds": round(stage_seconds, 1),
        "cached_seconds": round(cached_seconds, 1),
        "generate_seconds": round(generate_seconds, 1),
        "wall_seconds": round(sum(cell.wall_seconds for cell in every), 1),
        "cpus": sorted({int(cell.machine["cpus"]) for cell in every if "cpus" in cell.machine}),
    }


def _computed(stage: StageCost) -> int:
    return sum(request.computed for request in stage.requests.values())


def _cached_percent(requests: Mapping[str, RequestCost]) -> float:
    """The share of these requests' calls the call cache served (not computed in the run), in %."""
    calls = sum(request.calls for request in requests.values())
    computed = sum(request.computed for request in requests.values())
    return 0.0 if calls == 0 else round(100.0 * (calls - computed) / calls, 1)


def random_scorer(entries: Iterable[Entry], level: str) -> dict[str, float | None]:
    """A random scorer's expected values at ``level``: ROC-AUC 50, PRR 0, PR-AUC the positive
    rate (of the row with the most units at that level)."""
    at_level = [e.statistics for e in entries if e.statistics.level == level and e.statistics.units]
    widest = max(at_level, key=lambda stats: stats.units, default=None)
    rate = None if widest is None else round(100.0 * widest.positives / widest.units, 4)
    return {"roc_auc": 50.0, "pr_auc": rate, "prr": 0.0}


def _add_member_costs(
    row_costs: dict[str, dict[str, Any] | None], rows: Sequence[TableRow], index: int, methods: Mapping[str, MethodSpec]
) -> None:
    """In one column (``index``), each combining row's cost :func:`with_members` of that
    column: its members are read from its results file, their costs from their rows."""
    method_costs: dict[str, dict[str, Any]] = {}
    for key, found in row_costs.items():
        if found is not None:
            method_costs.setdefault(key.split("/", 1)[0], found)
    for row in rows:
        spec, result = methods[row.method], row.cells[index].result
        if spec.combines is not None and result is not None and row_key(row) in row_costs:
            members = member_methods(spec, result.params, f"results/{result.dataset}/{result.name}.json")
            row_costs[row_key(row)] = with_members(row_costs[row_key(row)], members, method_costs)


def _refuse_a_done_cell_without_units(row: TableRow, cell: TableCell, dataset: str, root: Path) -> None:
    """A cell at a binary level whose results or cost file says it ran, but whose units file is
    gone: an error naming it (its statistics would silently leave the table)."""
    if cell.level is None or cell.units_file is None:
        return
    done = [result_path(cell.result.dataset, cell.result.name)] if cell.result is not None else []
    if cell.cost_file is not None and (root / cell.cost_file).is_file():
        done.append(cell.cost_file)
    if done:
        raise ConfigError(
            f"{root / cell.units_file}: missing, though {done[0]} says the cell ran: restore it, or run"
            f" `python -m hallulab.benchmark units --cell {dataset}/{row.method}` after the cell's run"
            f" (`make benchmark CELL={dataset}/{row.method}` runs it again)"
        )


def cell_extras(
    row: TableRow,
    cell: TableCell,
    dataset: str,
    units: CellUnits,
    methods: Mapping[str, MethodSpec],
    cfg: ProtocolKnobs,
) -> dict[str, Any]:
    """A filled cell's ``nli``, ``members`` and ``paper`` fields (the module docstring), each
    where it applies."""
    result = cell.result
    assert result is not None
    found: dict[str, Any] = {}
    reading = nli_reading(dataset, result.overrides, result.params.get("nli")) if cell.reads_nli else None
    if reading is not None:
        found["nli"] = reading.to_dict()
    spec = methods[row.method]
    if cell.members is not None and spec.combines is not None:
        where = str(result_path(result.dataset, result.name))
        found["members"] = {
            "combined": [member.key for member in combined_members(spec, result.params, where)],
            "to_combine": [member.key for member in cell.members.kept],
            "candidates": [judged.to_dict() for judged in cell.members.judgements],
        }
    pairing = pairing_for(dataset, row_key(row))
    if pairing is not None:
        found["paper"] = paper_entry(pairing, units, cfg, _cell_models(result, reading.text() if reading else None))
    return found


def _cell_models(result: PublishedResult, nli: str | None) -> dict[str, str]:
    """Role -> the model behind it in a cell's run: its LLM roles, its NLI model, its BERTScore encoder."""
    models = {ref.role: ref.name for ref in result.models}
    if nli is not None:
        models["nli"] = nli
    bertscore = result.params.get("bertscore")
    if isinstance(bertscore, Mapping) and bertscore.get("name"):
        models["bertscore"] = str(bertscore["name"])
    return models


def build(
    rows: Sequence[TableRow],
    datasets: Sequence[str],
    methods: Mapping[str, MethodSpec],
    cfg: ProtocolKnobs,
    root: Path = Path("."),
) -> dict[str, Any]:
    """The table file's content from the rows' units files under ``root``."""
    baselines = [row_key(row) for row in rows if methods[row.method].trivial_baseline]
    columns: dict[str, Any] = {}
    cells: dict[str, dict[Path, CellCost]] = {}
    generations: list[StageCost] = []
    for index, dataset in enumerate(datasets):
        units: dict[str, CellUnits] = {}
        verdicts: dict[str, CellVerdict] = {}
        costs: dict[str, CellCost] = {}
        extras: dict[str, dict[str, Any]] = {}
        for row in rows:
            cell = row.cells[index]
            if cell.units_file is None:
                continue
            path = root / cell.units_file
            if not path.is_file():
                _refuse_a_done_cell_without_units(row, cell, dataset, root)
                continue
            has_cost = cell.cost_file is not None and (root / cell.cost_file).is_file()
            if cell.result is None and not has_cost:
                continue
            found = read_units(path)  # checked whole: an emptied or damaged file is refused
            if cell.result is None:
                continue
            if any(units.level != cell.level for units in found.values()):
                raise ConfigError(f"{path}: its units are not at the cell's level {cell.level!r}: run the cell again")
            if row.variant in found:
                units[row_key(row)] = found[row.variant]
                where = str(result_path(cell.result.dataset, cell.result.name))
                checks = methods[row.method].role_checks
                verdicts[row_key(row)] = cell_verdict(found[row.variant], checks, cell.result.diagnostics, where)
                extras[row_key(row)] = cell_extras(row, cell, dataset, found[row.variant], methods, cfg)
                if cell.cost_file is not None and (root / cell.cost_file).is_file():
                    in_column = cells.setdefault(dataset, {})
                    if cell.cost_file not in in_column:
                        in_column[cell.cost_file] = read_cell_cost(root / cell.cost_file)
                    costs[row_key(row)] = in_column[cell.cost_file]
        column = column_entries(units, baselines, cfg, verdicts)
        generating = _generating_run(costs, column.entries)
        if generating is not None:
            generations.append(generating[1])
        row_costs = {
            key: per_thousand_units(costs.get(key), entry.statistics.units) for key, entry in column.entries.items()
        }
        _add_member_costs(row_costs, rows, index, methods)
        columns[dataset] = {
            "best": column.best,
            "baseline": column.baseline,
            "random": {level: random_scorer(column.entries.values(), level) for level in column.best},
            "generate": _generation_row(generating),
            "rows": {
                key: {**entry.to_dict(), "cost": row_costs[key], **extras.get(key, {})}
                for key, entry in column.entries.items()
            },
        }
    return {
        "protocol": {
            "positive": "hallucinated",
            "metrics": list(METRICS),
            "bootstrap_samples": cfg.bootstrap_samples,
            "ci_level": cfg.ci_level,
            "seed": cfg.seed,
            "resampled": "records",
            "model_limited": bounds(),
        },
        "columns": columns,
        "total": whole_table({dataset: list(found.values()) for dataset, found in cells.items()}, generations),
    }


def write(content: Mapping[str, Any], root: Path = Path(".")) -> Path:
    path = root / TABLE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, dict(content))
    return path


def read(root: Path = Path(".")) -> dict[str, Any] | None:
    path = root / TABLE_FILE
    if not path.is_file():
        return None
    loaded: dict[str, Any] = read_json(path)
    return loaded
