"""The benchmark table as its committed results files fill it.

One row per method and benchmark variant (:attr:`hallulab.pipeline.spec.MethodSpec.benchmark_variants`,
every variant where a method declares none), one column per benchmark data set. A cell is

* ``n/a`` with the reason of the applicability rule (:mod:`hallulab.benchmark.applicability`);
* not run yet: the cell applies, and ``results/<data set>/benchmark_<method>.json``
  (:mod:`hallulab.benchmark.runs`) is not there;
* else the variant's ROC-AUC with its 95% bootstrap interval at the finest level the data set
  labels among those the method is evaluated at (ROC-AUC: the metric every level reports,
  with the hallucinated class positive, :mod:`hallulab.evaluation.levels`).

``docs/benchmark.md`` shows it between ``<!-- benchmark -->`` and ``<!-- /benchmark -->``
(:mod:`hallulab.results_render`, ``make readme``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hallulab.benchmark.applicability import BenchmarkDataset, Cell
from hallulab.benchmark.runs import CellRun
from hallulab.pipeline.spec import MethodSpec
from hallulab.results import PublishedResult, load_result

#: each level's ROC-AUC key in the evaluation's metrics
ROC_AUC: dict[str, str] = {
    "claim": "claim_roc_auc",
    "sentence": "roc_auc",
    "response": "response_roc_auc",
    "prompt": "prompt_auc",
}


@dataclass(frozen=True)
class TableCell:
    """One cell: ``reason`` where the method does not apply; ``result`` once its run is
    published (None: not run yet); ``metric`` and ``level``: what the cell reads of it."""

    reason: str | None = None
    result: PublishedResult | None = None
    level: str | None = None
    metric: str | None = None


@dataclass(frozen=True)
class TableRow:
    method: str
    title: str
    variant: str
    cells: tuple[TableCell, ...]


def rows(
    methods: Mapping[str, MethodSpec],
    datasets: Sequence[BenchmarkDataset],
    cells: Sequence[Cell],
    runs: Sequence[CellRun],
    root: Path,
) -> tuple[TableRow, ...]:
    """Every row of the table, method by method in listing order."""
    by_cell = {(cell.method, cell.dataset): cell for cell in cells}
    by_run = {(run.method, run.dataset): run for run in runs}
    found = []
    for name, spec in methods.items():
        published: dict[str, PublishedResult] = {}
        for dataset in datasets:
            run = by_run.get((name, dataset.name))
            if run is not None and run.results_file(root).is_file():
                published[dataset.name] = load_result(run.results_file(root))
        variants = spec.benchmark_variants or tuple(
            dict.fromkeys(v for result in published.values() for v in result.metrics)
        )
        for variant in variants:
            row = []
            for dataset in datasets:
                cell = by_cell[(name, dataset.name)]
                if not cell.applies:
                    row.append(TableCell(reason=cell.reason))
                    continue
                result = published.get(dataset.name)
                level = next((level for level in cell.levels if level in ROC_AUC), None)
                metric = ROC_AUC[level] if level is not None else None
                row.append(TableCell(result=result, level=level, metric=metric))
            found.append(TableRow(name, spec.title, variant, tuple(row)))
    return tuple(found)
