"""What a method cost in its detector-table cell: a cell's cost per 1,000 labelled
units (``results/benchmark.json``, written from each cell's own run), read back for a plan.

``hallulab plan`` counts the calls it can count before a run (generation, SelfCheck-NLI's pairs,
SelfCheck-Prompt's verdicts); the chained methods' calls depend on earlier replies. For each
method with a committed cell on the planned data set, the plan also shows that cell's recorded
seconds (its stages', with the calls its call cache served at their recorded model seconds) and
model calls per 1,000 units, and those seconds scaled to the planned responses:
per-1,000-unit seconds x (the cell's units per record) x responses / 1,000 (for a
combining method, the ensemble, with its members' cells, which running it runs). The
scaling carries the cell's own machine and models (the table names them), not the plan's rates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hallulab.benchmark.render import cost_notes


@dataclass(frozen=True)
class TableCost:
    """One method's cost on a data set, as its detector-table cell recorded it."""

    method: str
    cell: str  #: "<method>/<variant>", the row the cost is read from
    level: str
    records: int
    units: int
    complete: bool  #: every stage the cell needs ran in its own run (else a lower bound)
    #: the share of its calls the call cache served in its run (the figure counts them at the
    #: model seconds recorded when they were computed)
    cached_percent: float
    #: the cell's stage seconds plus its cached calls' recorded seconds, per 1,000 units
    seconds_per_1000_units: float
    model_calls_per_1000_units: float
    #: request label ("NLI pairs", "proxy LLM (smollm2)", ...) -> calls per 1,000 units
    requests: dict[str, float]
    #: the seconds scaled to the planned responses
    seconds: float


def cell_costs(table: Mapping[str, Any], dataset: str, responses: int, methods: Sequence[str] = ()) -> list[TableCost]:
    """The recorded cost of each method with a cell on ``dataset`` in the table file's content
    ``table`` (only ``methods``, when given), its first row per method, scaled to ``responses``."""
    column = table.get("columns", {}).get(dataset)
    if not column:
        return []
    found: dict[str, TableCost] = {}
    for cell, row in column.get("rows", {}).items():
        method = cell.split("/", 1)[0]
        cost = row.get("cost")
        if method in found or (methods and method not in methods) or not cost or not row.get("records"):
            continue
        units_per_record = row["units"] / row["records"]
        spent = cost.get("members") or cost  # a combining method runs its members' cells too
        per_thousand = float(spent["seconds"])
        found[method] = TableCost(
            method=method,
            cell=f"{cell} with its members' cells" if "members" in cost else cell,
            level=str(row["level"]),
            records=int(row["records"]),
            units=int(row["units"]),
            complete=bool(spent["complete"]),
            cached_percent=float(spent.get("cached_percent") or 0.0),
            seconds_per_1000_units=per_thousand,
            model_calls_per_1000_units=float(spent["model_calls"]),
            requests={label: float(r["calls"]) for label, r in spent.get("requests", {}).items()},
            seconds=round(per_thousand * units_per_record * responses / 1000.0, 1),
        )
    return list(found.values())


def cost_lines(costs: Sequence[TableCost], dataset: str) -> list[str]:
    """The plan's lines for ``costs``: one table row per method, then what the figures are."""
    if not costs:
        return []
    lines = [
        "",
        "Recorded in the detector table (results/benchmark.json), each cell's own run on the machine "
        f"and with the models its cost file names (results/benchmark/{dataset}/<method>.cost.json):",
        "",
        "| method | cell | level | seconds / 1,000 units | model calls / 1,000 units | hours for these responses |",
        "|---|---|---|---|---|---|",
    ]
    for c in costs:
        notes = cost_notes(c.complete, c.cached_percent)
        if not c.complete:
            notes[0] = "partial: a lower bound"
        partial = f" ({'; '.join(notes)})" if notes else ""
        calls = ", ".join(f"{label} {value:,.0f}" for label, value in c.requests.items()) or "none"
        lines.append(
            f"| {c.method} | {c.cell} | {c.level} | {c.seconds_per_1000_units:,.1f}{partial} | {calls} | "
            f"{c.seconds / 3600:.2f} |"
        )
    return lines
