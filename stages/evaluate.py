"""DVC stage `evaluate@<method>`: metrics, bootstrap intervals and PR-curve data.

Writes, for one method on one data set:
  metrics/<dataset>/<method>.json       variant -> metric -> value (percent)
  metrics/<dataset>/<method>.ci.json    variant -> metric -> [low, high] (bootstrap CI)
  metrics/<dataset>/<method>.info.json  counts, random baseline, the method's diagnostics
  metrics/<dataset>/pr/<method>_<task>.csv   PR curves of every variant (DVC plots)
"""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path

from hallulab.config import load_params, section
from hallulab.data.loaders import load_jsonl_passages
from hallulab.evaluation.protocol import (
    TASKS,
    ProtocolConfig,
    align,
    evaluate_variants,
    random_baseline,
)
from hallulab.io import atomic_open, read_json, write_json
from hallulab.logs import stage_logger
from hallulab.scores import MethodScores


def _rounded(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--passages", required=True)
    parser.add_argument("--scores", required=True)
    parser.add_argument("--out-dir", required=True, help="metrics/<dataset>")
    args = parser.parse_args()
    log = stage_logger("evaluate")

    cfg = ProtocolConfig(**section(load_params(args.params), "evaluate"))
    passages = load_jsonl_passages(args.passages)
    scores = MethodScores.from_dict(read_json(args.scores))
    metrics, intervals, curves = evaluate_variants(passages, scores.variants, cfg)

    out = Path(args.out_dir)
    method = scores.method
    write_json(out / f"{method}.json", {v: {k: _rounded(x) for k, x in m.items()} for v, m in metrics.items()})
    write_json(
        out / f"{method}.ci.json",
        {v: {k: [_rounded(lo), _rounded(hi)] for k, (lo, hi) in m.items()} for v, m in intervals.items()},
    )
    any_variant = next(iter(scores.variants.values()))
    write_json(
        out / f"{method}.info.json",
        {
            "passages": len(passages),
            "sentences": sum(len(p.sentences) for p in passages),
            "random_baseline": random_baseline(align(passages, any_variant), cfg),
            "bootstrap": {"samples": cfg.bootstrap_samples, "ci_level": cfg.ci_level, "seed": cfg.seed},
            "diagnostics": dict(scores.diagnostics),
        },
    )
    for task in TASKS:
        with atomic_open(out / "pr" / f"{method}_{task}.csv") as handle:
            writer = csv.writer(handle)
            writer.writerow(["variant", "recall", "precision"])
            for variant, by_task in curves.items():
                if task in by_task:
                    curve = by_task[task]
                    writer.writerows(
                        (variant, f"{r:.6f}", f"{p:.6f}") for r, p in zip(curve.recall, curve.precision, strict=True)
                    )
    for variant, values in metrics.items():
        log.info("%s %s", variant, {k: _rounded(x) for k, x in values.items()})


if __name__ == "__main__":
    main()
