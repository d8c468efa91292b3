"""The benchmark table as its committed results files fill it.

One row per method and benchmark variant (:attr:`hallulab.pipeline.spec.MethodSpec.benchmark_variants`,
every variant where a method declares none), one column per benchmark data set; a row's title is
the method's, followed by what its :attr:`~hallulab.pipeline.spec.MethodSpec.row_label` reads of
its filled cells (:func:`cell_setting`). A cell is

* ``n/a`` with the reason of the applicability rule (:mod:`hallulab.benchmark.applicability`),
  or because the row's variant writes no scores at the cell's level
  (:attr:`~hallulab.pipeline.spec.MethodSpec.variant_levels`: LUQ's response reading on a data
  set labelled at the sentence level);
* not run yet: the cell applies, and ``results/<data set>/benchmark_<method>.json``
  (:mod:`hallulab.benchmark.runs`) is not there;
* else filled, at the finest binary level the data set labels among those the method is
  evaluated at (:func:`hallulab.benchmark.units.binary_level`): its statistics are computed from
  the units file kept beside the results file (:mod:`hallulab.benchmark.table_file`).

``docs/benchmark.md`` shows it between ``<!-- benchmark -->`` and ``<!-- /benchmark -->``
(:mod:`hallulab.benchmark.render`, ``make readme``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hallulab.benchmark.applicability import BenchmarkDataset, Cell
from hallulab.benchmark.member_choice import MemberChoice
from hallulab.benchmark.runs import CellRun
from hallulab.benchmark.units import binary_level
from hallulab.pipeline.row_labels import CellSetting
from hallulab.pipeline.spec import MethodSpec
from hallulab.results.published import PublishedResult, load_result

#: ``generate.mode`` values that keep the responses a data set carries (``all`` writes new ones)
KEEPS_RESPONSES = ("keep", "auto", "samples")


@dataclass(frozen=True)
class TableCell:
    """One cell: ``reason`` where the method does not apply; ``result`` once its run is
    published (None: not run yet); ``level``: the binary level its statistics are at (where it
    applies)."""

    reason: str | None = None
    result: PublishedResult | None = None
    level: str | None = None
    #: where it applies, its units and cost files relative to the checkout (there or not)
    units_file: Path | None = None
    cost_file: Path | None = None
    #: whether its method reads an NLI model (its run's :attr:`~hallulab.benchmark.runs.CellRun.reads_nli`)
    reads_nli: bool = False
    #: a combining cell: its candidate members judged (:mod:`hallulab.benchmark.member_choice`)
    members: MemberChoice | None = None


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
        settings = [cell_setting(d, published[d.name]) for d in datasets if d.name in published]
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
                level = binary_level(cell.levels)
                if not spec.variant_scores_level(variant, level):
                    row.append(TableCell(reason=f"the variant writes no {level} scores"))
                    continue
                result = published.get(dataset.name)
                run = by_run.get((name, dataset.name))
                units = run.units_file() if run is not None else None
                cost = run.cost_file() if run is not None else None
                row.append(
                    TableCell(
                        result=result,
                        level=level,
                        units_file=units,
                        cost_file=cost,
                        reads_nli=run is not None and run.reads_nli,
                        members=run.members if run is not None else None,
                    )
                )
            found.append(TableRow(name, row_title(spec, variant, settings), variant, tuple(row)))
    return tuple(found)


def cell_setting(dataset: BenchmarkDataset, result: PublishedResult) -> CellSetting:
    """What a row label reads of one filled cell: whose responses it scored (the data's, as its
    loader declares, unless its run had ``generate.mode=all`` write new ones), the model of
    each role its results file names, and its params."""
    mode = next(
        (o.partition("=")[2] for o in reversed(result.overrides) if o.startswith("generate.mode=")),
        (result.params.get("dataset") or {}).get("generate_mode", "auto"),
    )
    return CellSetting(
        dataset=dataset.name,
        responses_by=dataset.provision.responses_by if mode in KEEPS_RESPONSES else None,
        models={model.role: model.name for model in result.models},
        params=result.params,
    )


def row_title(spec: MethodSpec, variant: str, cells: Sequence[CellSetting]) -> str:
    """The method's title, then its row label's words for ``variant`` where it declares one and
    they are not empty."""
    label = spec.row_label(variant, cells) if spec.row_label is not None and cells else ""
    return f"{spec.title}: {label}" if label else spec.title
