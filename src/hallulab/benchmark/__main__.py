"""``python -m hallulab.benchmark``: list the benchmark's cells, or run the ones not done yet.

    python -m hallulab.benchmark list              # every cell: done, to run, or n/a and why
    python -m hallulab.benchmark run               # every applicable cell without a results file
    python -m hallulab.benchmark run --cell nq_open/length   # one cell, done or not
    python -m hallulab.benchmark run --dataset mine          # one column's cells not done yet
    python -m hallulab.benchmark units --cell nq_open/length # keep the units of a cell just run
    python -m hallulab.benchmark table             # results/benchmark.json from the units files

``make benchmark`` runs the second, then the table (``CELL=nq_open/length`` for one cell,
``DATASET=mine`` for one column: a data set of one's own, ``hallulab data add``); see
:mod:`hallulab.benchmark.runs` for what a cell runs and on which subset, and
:mod:`hallulab.benchmark.table_file` for what the table computes. ``units`` is for a cell run by
the ``make result`` line of its results file: ``run`` keeps a cell's units itself.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from hallulab.benchmark import table_file
from hallulab.benchmark.applicability import BenchmarkDataset, Cell, applicability, benchmark_datasets
from hallulab.benchmark.runs import (
    BenchmarkSettings,
    CellRun,
    cell_runs,
    export_units,
    is_done,
    make_runner,
    run_pending,
    with_arguments,
)
from hallulab.benchmark.table import rows as benchmark_rows
from hallulab.core.config import CONF_DIR, ConfigError
from hallulab.core.errors import UserFacingError
from hallulab.evaluation.protocol import ProtocolKnobs
from hallulab.pipeline import registry
from hallulab.pipeline.params import ParamsView


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m hallulab.benchmark", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("."), help="the checkout (conf/, results/ and the Makefile)")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="every cell: done, to run, or n/a with its reason")
    run = commands.add_parser("run", help="run the applicable cells without a results file, then the table")
    run.add_argument("--cell", help="DATASET/METHOD: run this cell alone, whether or not it is done")
    for sub in (listing, run):
        sub.add_argument("--dataset", help="one column: only this data set's cells")
    run.add_argument("--args", default="", help="-S key=value settings added to every cell (other models)")
    units = commands.add_parser("units", help="keep the labelled units of a cell the workspace has just run")
    units.add_argument("--cell", required=True, help="DATASET/METHOD")
    commands.add_parser("table", help="write results/benchmark.json from the committed units files")
    return parser


def _write_table(
    root: Path, datasets: Sequence[BenchmarkDataset], cells: Sequence[Cell], runs: Sequence[CellRun]
) -> Path:
    methods = registry.methods()
    rows = benchmark_rows(methods, datasets, cells, runs, root)
    cfg = ParamsView.load(str(root / "params.yaml"), ("evaluate",), "evaluate").typed(ProtocolKnobs, "evaluate")
    return table_file.write(table_file.build(rows, [d.name for d in datasets], methods, cfg, root), root)


def _column(args: argparse.Namespace, datasets: Sequence[BenchmarkDataset]) -> str | None:
    """``--dataset``'s column, checked against the table's columns (None: every column)."""
    name: str | None = getattr(args, "dataset", None)
    if name is not None and name not in {dataset.name for dataset in datasets}:
        raise ConfigError(
            f"--dataset {name}: not a column of the table; columns: {[d.name for d in datasets]} "
            "(a labelled file of your own becomes one with `hallulab data add NAME FILE`)"
        )
    return name


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        own_conf = args.root / "conf"
        datasets = benchmark_datasets(conf_dir=own_conf if (own_conf / "dataset").is_dir() else CONF_DIR)
        cells = applicability(datasets=datasets)
        settings = BenchmarkSettings.load()
        runs = cell_runs(cells, datasets, settings, root=args.root)
        column = _column(args, datasets)
    except UserFacingError as error:
        print(f"hallulab benchmark: error: {error}", file=sys.stderr)
        return 2
    try:
        if args.command == "list":
            by_key = {run.key: run for run in runs}
            for cell in cells:
                if column is not None and cell.dataset != column:
                    continue
                key = f"{cell.dataset}/{cell.method}"
                run = by_key.get(key)
                if run is None:
                    print(f"{key}\tn/a\t{cell.reason}")
                    continue
                state = "done" if is_done(run, args.root) else "to run"
                blocked = run.members.blocked if run.members is not None and state == "to run" else None
                print(f"{key}\t{state}\t{run.command}" + (f"\twaits: {blocked}" if blocked else ""))
            return 0
        if args.command == "units":
            run = next((run for run in runs if run.key == args.cell), None)
            if run is None:
                raise ConfigError(f"--cell {args.cell}: not an applicable cell; applicable: {[r.key for r in runs]}")
            count = export_units(run, args.root)
            kept = [run.units_file(), *([run.member_units_file()] if run.member_variants else [])]
            print(f"{' and '.join(map(str, kept))}: {count} labelled units")
            return 0
        if args.command == "table":
            print(f"{_write_table(args.root, datasets, cells, runs)}: written")
            return 0
        runs = with_arguments(runs, args.args)

        def plan(run: CellRun) -> CellRun:
            # a combining cell planned again: its members judged from what the cells run so far left
            fresh = with_arguments(cell_runs(cells, datasets, settings, root=args.root), args.args)
            return next(found for found in fresh if found.key == run.key)

        chosen = [run for run in runs if column is None or run.dataset == column]
        outcome = run_pending(chosen, make_runner(args.root), args.root, only=args.cell, plan=plan)
        print(f"{_write_table(args.root, datasets, cells, runs)}: written")
    except UserFacingError as error:
        print(f"hallulab benchmark: error: {error}", file=sys.stderr)
        return 2
    print(
        f"benchmark: {len(outcome.ran)} cell(s) run, {len(outcome.done_before)} done before, "
        f"{len(outcome.failed)} failed{': ' + ', '.join(outcome.failed) if outcome.failed else ''}"
    )
    return 1 if outcome.failed else 0


if __name__ == "__main__":
    sys.exit(main())
