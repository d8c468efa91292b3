"""DVC stage `curve@<method>`: performance against the number of samples N (SelfCheckGPT
Figures 7 / 8) from a method's stored I x N_max sample matrices, N = 1 .. N_max.

    python stages/curve.py --method NAME --dataset NAME [--params params.yaml]

Pure arithmetic (no model call): for each N the first N samples are used (the paper's
setup), sentence scores are their mean, and the sentence-level protocol gives NonFact /
NonFact* / Factual AUC-PR and passage Pearson / Spearman. Writes
metrics/<dataset>/n_curve/<method>.csv (long format: variant, num_samples, metric, value);
a header only when the data set has no sentence labels.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses

from hallulab.core.io import atomic_open, read_json
from hallulab.core.units import record_scores, sentence_scores
from hallulab.data.records import load_jsonl_records
from hallulab.evaluation.protocol import ProtocolKnobs, align, compute_metrics
from hallulab.methods.sample_matrix import aggregate
from hallulab.methods.sample_scores import SampleMatrixScores
from hallulab.methods.sample_selection import SampleKnobs
from hallulab.pipeline import paths, registry
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.runner import run_stage, stage_logger

CURVE_METRICS = ("nonfact_aucpr", "nonfact_star_aucpr", "factual_aucpr", "passage_pearson", "passage_spearman")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--method", required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--params", default="params.yaml")
    args = parser.parse_args()
    spec = registry.method(args.method)
    log = stage_logger(f"curve_{args.method}")
    cfg = ParamsView.load(args.params, ("evaluate",), "curve").typed(ProtocolKnobs, "evaluate")
    labelled = [p for p in load_jsonl_records(paths.records(args.dataset)) if p.labels is not None]
    rows: list[tuple[str, int, str, float]] = []
    raw_path = paths.raw_scores(args.method, args.dataset)
    scores = spec.read_raw(read_json(raw_path), str(raw_path))
    if not isinstance(scores, SampleMatrixScores):  # spec.sample_curve: the method stores sample matrices
        raise TypeError(f"{args.method}: the N-curve reads SampleMatrixScores, not {type(scores).__name__}")
    for stored in scores.variants:
        chosen = {pid: m for pid, m in stored.matrices.items() if any(p.id == pid for p in labelled)}
        if not chosen:
            continue
        stored = dataclasses.replace(stored, matrices=chosen)
        n_max = min(m.shape[1] for m in chosen.values())
        for n in range(1, n_max + 1):
            frame, _ = aggregate(stored, SampleKnobs(used=n))
            data = align(labelled, sentence_scores(frame, stored.variant), record_scores(frame, stored.variant))
            metrics = compute_metrics(data, cfg)
            rows.extend((stored.variant, n, key, metrics[key]) for key in CURVE_METRICS)
        log.info("%s: N = 1..%d", stored.variant, n_max)
    with atomic_open(paths.n_curve(args.method, args.dataset)) as handle:
        writer = csv.writer(handle)
        writer.writerow(["variant", "num_samples", "metric", "value"])
        writer.writerows((v, n, k, f"{x:.4f}") for v, n, k, x in rows)


if __name__ == "__main__":
    run_stage("curve", main)
