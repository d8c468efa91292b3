"""DVC stage `evaluate@<method>`: metrics at every labelled level, bootstrap intervals, PR curves.

    python stages/evaluate.py --method NAME --dataset NAME [--params params.yaml]

Writes, for one method on one data set (:mod:`hallulab.evaluation.levels`):
  metrics/<dataset>/<method>.json       variant -> metric -> value (percent; null = undefined)
  metrics/<dataset>/<method>.ci.json    variant -> metric -> [low, high] (bootstrap CI)
  metrics/<dataset>/<method>.info.json  counts per level, random baselines, why each null is null
                                        (reason counts; resamples an interval left out), diagnostics;
                                        a combining method's paired differences against its members
  metrics/<dataset>/pr/<method>.csv     PR curves (task, variant, recall, precision) for DVC plots
A data set without labels at any level the method scores gives empty files ({} and a header).
Any subset evaluates: an undefined metric is null with its reason, never an error.
"""

from __future__ import annotations

import argparse
import csv
import math

import pandas as pd

from hallulab.core.io import atomic_open, read_json, write_json
from hallulab.data.records import load_jsonl_passages
from hallulab.evaluation.levels import evaluate_levels, undefined_report
from hallulab.evaluation.paired import against_members
from hallulab.evaluation.protocol import ProtocolConfig
from hallulab.pipeline import paths, registry
from hallulab.pipeline.controls import AggregateControls
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.runner import run_stage, stage_logger


def _rounded(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--method", required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--params", default="params.yaml")
    args = parser.parse_args()
    registry.check_method_name(args.method)
    log = stage_logger(f"evaluate_{args.method}")
    cfg = ParamsView.load(args.params, ("evaluate",), "evaluate").typed(ProtocolConfig, "evaluate")
    passages = load_jsonl_passages(paths.passages(args.dataset))
    frame = pd.read_parquet(paths.unit_scores(args.method, args.dataset))
    diagnostics = read_json(paths.diagnostics(args.method, args.dataset))
    controls_file = paths.controls(args.method, args.dataset)
    controls = AggregateControls.from_record(read_json(controls_file), controls_file)
    results = evaluate_levels(passages, frame, cfg, thresholds=controls.thresholds or None)

    metrics: dict[str, dict[str, float | None]] = {}
    intervals: dict[str, dict[str, list[float | None]]] = {}
    for result in results.values():
        for variant, values in result.metrics.items():
            metrics.setdefault(variant, {}).update({k: _rounded(v) for k, v in values.items()})
        for variant, ranges in result.intervals.items():
            intervals.setdefault(variant, {}).update(
                {k: [_rounded(interval.low), _rounded(interval.high)] for k, interval in ranges.items()}
            )
    write_json(paths.metrics(args.method, "", args.dataset), metrics)
    write_json(paths.metrics(args.method, "ci", args.dataset), intervals)
    sentence = results.get("sentence")
    # a combining method's variants against each member's own, on the same resamples
    paired = against_members(passages, frame, cfg) if results else {}
    write_json(
        paths.metrics(args.method, "info", args.dataset),
        {
            "method": args.method,
            "passages": len(passages),
            "sentences": sum(len(p.sentences) for p in passages),
            "levels": {level: r.counts for level, r in results.items()},
            "random_baseline": sentence.random_baseline if sentence else {},
            "random_baselines": {level: r.random_baseline for level, r in results.items()},
            "bootstrap": {"samples": cfg.bootstrap_samples, "ci_level": cfg.ci_level, "seed": cfg.seed},
            "undefined": undefined_report(results),
            "diagnostics": diagnostics,
            "controls": controls.to_dict(),
            **({"paired": paired} if paired else {}),
        },
    )
    with atomic_open(paths.pr_curves(args.method, args.dataset)) as handle:
        writer = csv.writer(handle)
        writer.writerow(["task", "variant", "recall", "precision"])
        for result in results.values():
            for variant, by_task in result.curves.items():
                for task, curve in by_task.items():
                    writer.writerows(
                        (task, variant, f"{r:.6f}", f"{p:.6f}")
                        for r, p in zip(curve.recall, curve.precision, strict=True)
                    )
    if not results:
        log.warning("%s: the data set labels none of the units this method scores; metric files are empty", args.method)
    for variant, rounded in metrics.items():
        log.info("%s %s", variant, rounded)


if __name__ == "__main__":
    run_stage("evaluate", main)
