"""DVC stage `aggregate_<method>`: a method's cheap step (the sweep knobs; no model), then its
evaluation (the ``evaluate`` protocol).

    python stages/aggregate.py --method NAME --dataset NAME [--params params.yaml]

Writes the unit-level scores (``data/aggregated/<dataset>/<method>.parquet``, see
:mod:`hallulab.core.units`), the method's diagnostics (``.diagnostics.json``), controls and unit
details, then its metrics at every level the data set labels, with bootstrap intervals and PR
curves (``metrics/<dataset>/<method>.json``, ``.ci.json``, ``.info.json``, ``pr/<method>.csv``:
:mod:`hallulab.evaluation.method_metrics`).
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from hallulab.core.io import read_json, write_json
from hallulab.core.units import DETAIL_COLUMNS, detail_frame, score_frame
from hallulab.data.records import load_jsonl_records
from hallulab.evaluation.method_metrics import write_method_metrics
from hallulab.evaluation.protocol import ProtocolKnobs
from hallulab.pipeline import paths, registry
from hallulab.pipeline.aggregate_step import aggregate_method
from hallulab.pipeline.members import parse_members
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.runner import read_artifacts, run_stage, stage_logger, write_run_log, write_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--method", required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--params", default="params.yaml")
    args = parser.parse_args()
    stage = f"aggregate_{args.method}"
    log = stage_logger(stage)
    spec = registry.method(args.method)
    view = ParamsView.load(args.params, spec.aggregate.param_keys(), stage)
    protocol = ParamsView.load(args.params, ("evaluate",), stage).typed(ProtocolKnobs, "evaluate")
    records = load_jsonl_records(paths.records(args.dataset))
    artifacts = read_artifacts(spec.requires, args.dataset)
    raw_path = paths.raw_scores(args.method, args.dataset)
    raw = spec.read_raw(read_json(raw_path), str(raw_path)) if spec.raw is not None else None
    members: dict[str, pd.DataFrame] = {}
    if spec.combines is not None:  # the members_<method> stages wrote one file per member
        for member in parse_members(view.get(spec.combines), spec.combines, spec.name):
            path = paths.member_scores(spec.name, member.method, member.variant, args.dataset)
            members[member.key] = pd.read_parquet(path)
    started = time.perf_counter()
    result = aggregate_method(spec, args.dataset, records, artifacts, raw, view, log, members)
    frame = score_frame(result.scores)
    write_table(paths.unit_scores(args.method, args.dataset), frame)
    write_json(paths.diagnostics(args.method, args.dataset), result.record())
    write_json(paths.controls(args.method, args.dataset), result.controls.to_dict())
    details = result.details if result.details is not None else detail_frame()
    write_table(paths.unit_details(args.method, args.dataset), details[list(DETAIL_COLUMNS)])
    seconds = time.perf_counter() - started
    variants = list(dict.fromkeys(frame["variant"]))
    log.info("%s: %d score rows, variants %s in %.2fs", args.method, len(frame), variants, seconds)
    write_method_metrics(args.method, args.dataset, records, protocol, log)
    write_run_log(stage, args.dataset, {"seconds": seconds, "rows": len(frame)})


if __name__ == "__main__":
    run_stage("aggregate", main)
