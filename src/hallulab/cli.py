"""The ``hallulab`` command: score records or list methods, without DVC (:mod:`hallulab.api`).

    hallulab methods
    hallulab score data.jsonl --method selfcheck_ngram -o scores.parquet
    hallulab score data.jsonl --method ccp -S ccp.aggregate.k=[5] -o scores.csv

Errors a user can act on (a bad record, a bad or unknown setting, a missing model) are one
line, ``hallulab score: error: ...``, and exit status 2, as the stages print them
(``HALLULAB_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from hallulab.core.errors import UserFacingError


def _methods() -> int:
    from hallulab.api import methods

    for spec in methods():
        keys = (*spec.aggregate.params, *(spec.score.params if spec.score else ()))
        sections = sorted({key.split(".")[0] for key in keys})
        print(f"{spec.name:<20} {spec.level:<9} {spec.paper} ({spec.section})")
        print(f"{'':<20} settings: {', '.join(sections) or '-'}; needs: {', '.join(spec.requires) or '-'}")
    return 0


def _score(args: argparse.Namespace) -> int:
    from hallulab.api import Detector

    scores = Detector(args.method, args.set).score(Path(args.records))
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix == ".csv":
        scores.to_csv(out, index=False)
    else:
        scores.to_parquet(out, index=False)
    variants = ", ".join(dict.fromkeys(scores["variant"]))
    print(f"{len(scores)} unit scores ({variants}) -> {out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="hallulab", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("methods", help="list the registered methods, their unit level and settings")
    score = commands.add_parser("score", help="score a JSONL file of records with one method")
    score.add_argument("records", help="JSONL in the canonical schema (see the README's data section)")
    score.add_argument("--method", required=True)
    score.add_argument(
        "-S", "--set", action="append", default=[], metavar="KEY=VALUE", help="a setting, as dvc exp run -S takes it"
    )
    score.add_argument("-o", "--output", default="scores.parquet", help=".parquet (default) or .csv")
    args = parser.parse_args(argv)
    try:
        return _methods() if args.command == "methods" else _score(args)
    except Exception as error:
        actionable = isinstance(error, UserFacingError | FileNotFoundError | UnicodeDecodeError | PermissionError)
        if os.environ.get("HALLULAB_DEBUG") or not actionable:
            raise
        print(f"hallulab {args.command}: error: {error}", file=sys.stderr)
        print("(set HALLULAB_DEBUG=1 for the traceback)", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
