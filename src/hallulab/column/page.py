"""A column as the user reads it: the JSON file, the Markdown page and the terminal table.

The rows are sorted by ROC-AUC, best first (a row without one last). A model-limited row is
marked ``‡``, as the table marks it (:mod:`hallulab.benchmark.render`), and never called a
best; the sentence under the table says which rows are above the trivial length baseline by the
paired 95% interval of the ROC-AUC difference, and which rows are told apart from each other by
the same interval (:func:`hallulab.column.run.told_apart`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hallulab.benchmark.render import LIMITED_MARK, model_limited_rule
from hallulab.benchmark.statistics import METRIC_TITLES, METRICS, Estimate
from hallulab.benchmark.validity import bounds
from hallulab.column.run import RANKING_METRIC, Column, ColumnCell
from hallulab.evaluation.protocol import ProtocolKnobs


def _value(estimate: Estimate) -> str:
    if estimate.point is None:
        return "–"
    if estimate.low is None or estimate.high is None:
        return f"{estimate.point:.1f}"
    return f"{estimate.point:.1f} [{estimate.low:.1f}, {estimate.high:.1f}]"


def ordered(cells: Sequence[ColumnCell]) -> list[ColumnCell]:
    """Best ROC-AUC first; a row without one last."""
    point = lambda c: c.statistics.metrics[RANKING_METRIC].point  # noqa: E731
    return sorted(cells, key=lambda c: (point(c) is None, -(point(c) or 0.0)))


def _versus(found: ColumnCell) -> str:
    if found.versus_length is None:
        return "baseline"
    difference = found.versus_length.differences[RANKING_METRIC]
    verdict = found.versus_length.verdict(RANKING_METRIC)
    return verdict if difference.point is None else f"{difference.point:+.1f} ({verdict})"


def _calls(found: ColumnCell) -> str:
    if not found.calls:
        return "0"
    return ", ".join(f"{c.request} {c.calls} ({c.computed} computed)" for c in found.calls)


HEADER = ("detector", "level", "units", *(METRIC_TITLES[m] for m in METRICS), "vs length", "verdict", "seconds")


def rows(column: Column) -> list[tuple[str, ...]]:
    """The table's rows as text, in :func:`ordered` order."""
    found = []
    for cell in ordered(column.cells):
        mark = f" {LIMITED_MARK}" if cell.verdict.limited else ""
        found.append(
            (
                f"{cell.name}{mark}",
                cell.level,
                f"{cell.statistics.units} ({cell.statistics.positives}+)",
                *(_value(cell.statistics.metrics[m]) for m in METRICS),
                _versus(cell),
                cell.verdict.verdict,
                f"{cell.seconds:.1f}",
            )
        )
    return found


def _names(names: Sequence[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def verdict_sentences(column: Column) -> list[str]:
    """Which rows beat the length baseline, which rows are told apart, which are model-limited."""
    valid = [c for c in ordered(column.cells) if not c.verdict.limited and not c.trivial_baseline]
    above = [
        c.name for c in valid if c.versus_length is not None and c.versus_length.verdict(RANKING_METRIC) == "better"
    ]
    lines = []
    if above:
        lines.append(
            f"Above the length baseline by the paired 95% interval of the ROC-AUC difference: {_names(above)}."
        )
    else:
        lines.append("No detector is above the length baseline by the paired 95% interval of the ROC-AUC difference.")
    if column.apart:
        pairs = "; ".join(f"`{a.better}` > `{a.worse}` ({a.difference:+.1f})" for a in column.apart)
        lines.append(f"Told apart from each other (ROC-AUC, paired 95% interval excludes 0): {pairs}.")
    else:
        lines.append("No two rows that are not model-limited are told apart by the paired 95% interval.")
    limited = [c for c in column.cells if c.verdict.limited]
    for cell in limited:
        lines.append(f"{LIMITED_MARK} `{cell.name}`: {cell.verdict.reason}.")
    return lines


def terminal_table(column: Column) -> str:
    """The table as aligned text, then the sentences."""
    body = [HEADER, *rows(column)]
    widths = [max(len(row[i]) for row in body) for i in range(len(HEADER))]
    lines = ["  ".join(text.ljust(width) for text, width in zip(row, widths, strict=True)).rstrip() for row in body]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join([*lines, "", *verdict_sentences(column)])


def markdown_page(column: Column, calibrations: Mapping[str, str]) -> str:
    """The column's page: what was run, the table, the sentences, the rule, costs and calibrations."""
    cfg = ProtocolKnobs()
    lines = [
        f"# Which detector on {column.name}",
        "",
        f"{column.records} records. Every detector that applies to what the records carry, sorted by ROC-AUC;"
        f" hallucinated class positive; intervals resample records ({cfg.bootstrap_samples} resamples,"
        f" {cfg.ci_level:.0%}). *vs length*: the paired ROC-AUC difference against the trivial length baseline"
        f" on the same units. {LIMITED_MARK}: model-limited.",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
        *("| " + " | ".join(row) + " |" for row in rows(column)),
        "",
        *verdict_sentences(column),
        "",
        model_limited_rule({"protocol": {"model_limited": bounds()}}),
        "",
    ]
    if column.members:
        lines += [f"The ensemble combines {_names(column.members)} (one valid row per method, at one level).", ""]
    elif column.ensemble_reason:
        lines += [f"The ensemble did not run: {column.ensemble_reason}.", ""]
    lines += ["## Cost", "", "| detector | seconds | model calls |", "|---|---|---|"]
    seen = set()
    for cell in column.cells:
        if cell.method not in seen:
            seen.add(cell.method)
            lines.append(f"| {cell.method} | {cell.seconds:.1f} | {_calls(cell)} |")
    if calibrations:
        lines += ["", "## Calibrations", ""]
        lines += [
            f"* `{name}`: `{path}` (`hallulab score --calibration {path}`)" for name, path in calibrations.items()
        ]
    if column.not_applicable:
        lines += ["", "## Not applicable", ""]
        lines += [f"* {n.method}: {n.reason}" for n in column.not_applicable]
    return "\n".join(lines) + "\n"


def _estimate_list(estimate: Estimate) -> list[float | None]:
    return estimate.to_list()


def column_dict(column: Column, calibrations: Mapping[str, str]) -> dict[str, Any]:
    """The column as its JSON file holds it."""
    cfg = ProtocolKnobs()
    return {
        "name": column.name,
        "records": column.records,
        "protocol": {
            "positive": "hallucinated",
            "bootstrap_samples": cfg.bootstrap_samples,
            "ci_level": cfg.ci_level,
            "ranking_metric": RANKING_METRIC,
            "model_limited": bounds(),
        },
        "cells": [
            {
                "method": c.method,
                "variant": c.variant,
                "title": c.title,
                "level": c.level,
                "units": c.statistics.units,
                "records": c.statistics.records,
                "positives": c.statistics.positives,
                "metrics": {m: _estimate_list(e) for m, e in c.statistics.metrics.items()},
                "versus_length": None
                if c.versus_length is None
                else {
                    m: {"difference": _estimate_list(e), "verdict": c.versus_length.verdict(m)}
                    for m, e in c.versus_length.differences.items()
                },
                **c.verdict.to_dict(),
                "seconds": round(c.seconds, 3),
                "calls": [{"request": k.request, "calls": k.calls, "computed": k.computed} for k in c.calls],
                "calibration": calibrations.get(c.name),
            }
            for c in ordered(column.cells)
        ],
        "told_apart": [{"better": a.better, "worse": a.worse, "difference": a.difference} for a in column.apart],
        "ensemble": {"members": list(column.members), "not_run": column.ensemble_reason},
        "not_applicable": [{"method": n.method, "reason": n.reason} for n in column.not_applicable],
    }
