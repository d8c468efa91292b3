"""``python -m hallulab.benchmark``: list the benchmark's cells, or run the ones not done yet.

    python -m hallulab.benchmark list              # every cell: done, to run, or n/a and why
    python -m hallulab.benchmark run               # every applicable cell without a results file
    python -m hallulab.benchmark run --cell nq_open/length   # one cell, done or not

``make benchmark`` runs the second (``CELL=nq_open/length`` for one cell); see
:mod:`hallulab.benchmark.runs` for what a cell runs and on which subset.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from hallulab.benchmark.applicability import applicability, benchmark_datasets
from hallulab.benchmark.runs import BenchmarkSettings, cell_runs, make_runner, run_pending
from hallulab.core.errors import UserFacingError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m hallulab.benchmark", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("."), help="the checkout (results/ and the Makefile)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="every cell: done, to run, or n/a with its reason")
    run = commands.add_parser("run", help="run the applicable cells without a results file")
    run.add_argument("--cell", help="DATASET/METHOD: run this cell alone, whether or not it is done")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        datasets = benchmark_datasets()
        cells = applicability(datasets=datasets)
        runs = cell_runs(cells, datasets, BenchmarkSettings.load())
    except UserFacingError as error:
        print(f"hallulab benchmark: error: {error}", file=sys.stderr)
        return 2
    if args.command == "list":
        by_key = {run.key: run for run in runs}
        for cell in cells:
            key = f"{cell.dataset}/{cell.method}"
            run = by_key.get(key)
            if run is None:
                print(f"{key}\tn/a\t{cell.reason}")
                continue
            state = "done" if run.results_file(args.root).is_file() else "to run"
            print(f"{key}\t{state}\t{run.command}")
        return 0
    try:
        outcome = run_pending(runs, make_runner(args.root), args.root, only=args.cell)
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
