"""DVC stage `curve_num_samples`: performance against the number of samples N (the shape of
SelfCheckGPT Figure 7 / 8), for every stored matrix variant, N = 1 .. N_max.

Pure arithmetic over the stored I x N_max matrices (no model call): for each N the first N
samples are used (the paper's setup), sentence scores are the mean over them, and the
evaluate protocol gives NonFact / NonFact* / Factual AUC-PR and passage Pearson / Spearman.
Writes metrics/<dataset>/n_curve.csv (long format: variant, num_samples, metric, value).
"""

from __future__ import annotations

import argparse
import csv

from hallulab.config import load_params, section
from hallulab.data.loaders import load_jsonl_passages
from hallulab.evaluation.protocol import ProtocolConfig, align, compute_metrics
from hallulab.io import atomic_open, read_json
from hallulab.logs import stage_logger
from hallulab.methods.sample_matrix import SampleMatrices, SampleSelection, aggregate

CURVE_METRICS = ("nonfact_aucpr", "nonfact_star_aucpr", "factual_aucpr", "passage_pearson", "passage_spearman")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--passages", required=True)
    parser.add_argument("--matrices", nargs="+", required=True, help="stored matrix file(s)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    log = stage_logger("curve_num_samples")

    cfg = ProtocolConfig(**section(load_params(args.params), "evaluate"))
    passages = load_jsonl_passages(args.passages)
    rows: list[tuple[str, int, str, float]] = []
    for path in args.matrices:
        stored = SampleMatrices.from_dict(read_json(path))
        n_max = min(m.shape[1] for m in stored.matrices.values())
        for n in range(1, n_max + 1):
            scores = aggregate(stored, SampleSelection(num_samples=n))
            metrics = compute_metrics(align(passages, scores.variants[stored.variant]), cfg)
            rows.extend((stored.variant, n, key, metrics[key]) for key in CURVE_METRICS)
        log.info("%s: N = 1..%d", stored.variant, n_max)
    with atomic_open(args.out) as handle:
        writer = csv.writer(handle)
        writer.writerow(["variant", "num_samples", "metric", "value"])
        writer.writerows((v, n, k, f"{x:.4f}") for v, n, k, x in rows)


if __name__ == "__main__":
    main()
