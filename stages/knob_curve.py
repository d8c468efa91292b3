"""DVC stage `knob_curve@<method>`: a metric against a knob whose values are variants (CCP's
K, the paper's Figure 7), from the evaluated metrics: no model call.

    python stages/knob_curve.py --method NAME --dataset NAME

The method's diagnostics map variants to a series and a knob value
(``knob_curve: {variant: {"series": ..., <knob>: value}}``). Writes
metrics/<dataset>/knob_curve/<method>.csv (series, <knob>, metric, value); a header only
when the data set labels nothing.
"""

from __future__ import annotations

import argparse
import csv

from hallulab.core.io import atomic_open, read_json
from hallulab.pipeline import paths, registry
from hallulab.pipeline.controls import AggregateControls
from hallulab.pipeline.runner import run_stage

CURVE_METRICS = ("claim_roc_auc", "claim_pr_auc", "nonfact_aucpr", "passage_spearman", "response_roc_auc")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--method", required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--knob", required=True)
    args = parser.parse_args()
    registry.check_method_name(args.method)
    metrics = read_json(paths.metrics(args.method, "", args.dataset))
    where = paths.controls(args.method, args.dataset)
    points = AggregateControls.from_record(read_json(where), where).knob_curve
    rows = []
    for variant, point in points.items():
        if point.knob != args.knob:
            raise ValueError(f"{where}: knob_curve.{variant} is a point on {point.knob!r}, not --knob {args.knob!r}")
        for metric in CURVE_METRICS:
            value = metrics.get(variant, {}).get(metric)
            if value is not None:
                rows.append((point.series, point.value, metric, f"{value:.4f}"))
    rows.sort(key=lambda r: (r[0], r[2], r[1]))
    with atomic_open(paths.knob_curve(args.method, args.dataset)) as handle:
        writer = csv.writer(handle)
        writer.writerow(["series", args.knob, "metric", "value"])
        writer.writerows(rows)


if __name__ == "__main__":
    run_stage("knob_curve", main)
