"""A method's metric files on one data set, from the unit scores its aggregate step wrote.

The second half of the ``aggregate_<method>`` stage (:mod:`hallulab.evaluation.levels` does the
arithmetic). It reads the stage's own outputs back from disk (unit scores, diagnostics,
controls), so the metrics are those of the files other stages read, and writes, under
``metrics/<dataset>/``:

  <method>.json       variant -> metric -> value (percent; null = undefined)
  <method>.ci.json    variant -> metric -> [low, high] (bootstrap interval)
  <method>.info.json  counts per level, random baselines, why each null is null (reason counts;
                      resamples an interval left out), diagnostics; a combining method's paired
                      differences against its members
  pr/<method>.csv     PR curves (task, variant, recall, precision) for DVC plots

A data set without labels at any level the method scores gives empty files ({} and a header).
Any subset evaluates: an undefined metric is null with its reason, never an error.
"""

from __future__ import annotations

import csv
import logging
import math

import pandas as pd

from hallulab.core.io import atomic_open, read_json, write_json
from hallulab.data.schema import Record
from hallulab.evaluation.levels import evaluate_levels, undefined_report
from hallulab.evaluation.paired import against_members
from hallulab.evaluation.protocol import ProtocolKnobs
from hallulab.pipeline import paths
from hallulab.pipeline.controls import AggregateControls


def _rounded(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)


def write_method_metrics(
    method: str, dataset: str, records: list[Record], cfg: ProtocolKnobs, log: logging.Logger
) -> None:
    """Evaluate ``method``'s unit scores on ``dataset`` at every labelled level and write its
    metric files (see the module docstring)."""
    frame = pd.read_parquet(paths.unit_scores(method, dataset))
    diagnostics = read_json(paths.diagnostics(method, dataset))
    controls_file = paths.controls(method, dataset)
    controls = AggregateControls.from_record(read_json(controls_file), controls_file)
    results = evaluate_levels(records, frame, cfg, thresholds=controls.thresholds or None)

    metrics: dict[str, dict[str, float | None]] = {}
    intervals: dict[str, dict[str, list[float | None]]] = {}
    for result in results.values():
        for variant, values in result.metrics.items():
            metrics.setdefault(variant, {}).update({k: _rounded(v) for k, v in values.items()})
        for variant, ranges in result.intervals.items():
            intervals.setdefault(variant, {}).update(
                {k: [_rounded(interval.low), _rounded(interval.high)] for k, interval in ranges.items()}
            )
    write_json(paths.metrics(method, "", dataset), metrics)
    write_json(paths.metrics(method, "ci", dataset), intervals)
    sentence = results.get("sentence")
    # a combining method's variants against each member's own, on the same resamples
    paired = against_members(records, frame, cfg) if results else {}
    write_json(
        paths.metrics(method, "info", dataset),
        {
            "method": method,
            "passages": len(records),
            "sentences": sum(len(p.sentences) for p in records),
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
    with atomic_open(paths.pr_curves(method, dataset)) as handle:
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
        log.warning("%s: the data set labels none of the units this method scores; metric files are empty", method)
    for variant, rounded in metrics.items():
        log.info("%s %s", variant, rounded)
