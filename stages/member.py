"""DVC stage `members_<combiner>@<i>`: one member's unit scores for a combining method.

    python stages/member.py --combiner ensemble --method NAME --variant NAME --dataset NAME

Reads ``data/aggregated/<dataset>/<method>.parquet``, keeps the variant's rows at the level
the combiner works at (``<combiner>.level``) and writes them to
``data/members/<dataset>/<combiner>/<method>.<variant>.parquet``
(:mod:`hallulab.pipeline.members`). A variant the method did not write under this run's
settings is absent (an empty table and a warning: the combiner combines the others and says
so); one without units at that level is a one-line error listing what the file holds.
"""

from __future__ import annotations

import argparse

import pandas as pd

from hallulab.pipeline import paths, registry
from hallulab.pipeline.members import Member, check_level, member_rows
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.runner import run_stage, stage_logger, write_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--combiner", required=True)
    parser.add_argument("--method", required=True)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--params", default="params.yaml")
    args = parser.parse_args()
    log = stage_logger(f"members_{args.combiner}")
    registry.check_method_name(args.method)  # checked without importing the method
    key = f"{args.combiner}.level"
    view = ParamsView.load(args.params, (key,), f"members_{args.combiner}")
    level = check_level(str(view.get(key)), key)
    member = Member(args.method, args.variant)
    source = paths.unit_scores(args.method, args.dataset)
    rows = member_rows(pd.read_parquet(source), member, level, source, log)
    write_table(paths.member_scores(args.combiner, args.method, args.variant, args.dataset), rows)
    log.info("%s: %d %s units", member.key, len(rows), level)


if __name__ == "__main__":
    run_stage("members", main)
