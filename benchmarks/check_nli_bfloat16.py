"""Full-set check: SelfCheck-NLI on WikiBio with the NLI scorer in bfloat16 against float32.

Issue 21 §3 asks for an NLI path on the CPU with at least 3x the float32 pairs/s that moves
SelfCheck-NLI's NonFact AUC-PR on WikiBio by at most half a point. The scorer's
``nli.dtype: bfloat16`` knob is such a path where the CPU multiplies bfloat16 matrices in
hardware (Intel AMX, flag ``amx_bf16``); where it only converts them (no AMX) it is slower
than float32, which is why ``machine.cpu_features`` is recorded beside the ratio.

Both dtypes score every distinct (sample, sentence) pair of the chosen WikiBio passages
through the project's :class:`~hallulab.nli.scorer.NLIScorer` (no call cache, so both are
timed cold, tokenisation included), in the order the published result used
(``--pair-order``). Each sentence's score is its mean P(contradict) over the samples
(SelfCheckGPT Eq. 9-10), scored by the evaluate stage's own protocol functions (``align``,
``compute_metrics``), so the change of the metric is paired on the same passages. The
float32 NonFact AUC-PR re-derives the published result of the same model
(``results/wikibio/selfcheck_nli_passages.json`` for the passages recipe's model, whose
``diagnostics.identity.weights`` is the ``model_weights`` recorded here), which checks that
this script scores what the pipeline scores. To re-derive the section: ``make nli-result
NLI_RECIPE=passages`` (the model from the run cache), then this script on
``models/nli_minilm``.

Records the section ``nli_bfloat16`` of ``benchmarks/results.json``. Usage:

    python benchmarks/check_nli_bfloat16.py [--model models/nli_minilm] [--passages 238] [--pair-order sample_first]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from hallulab.bench_record import BenchRow, record
from hallulab.core.config import dataset_config
from hallulab.data.loaders import load_dataset
from hallulab.data.schema import Passage
from hallulab.evaluation.protocol import ProtocolConfig, align, compute_metrics
from hallulab.methods.selfcheck_nli.score import passage_matrices
from hallulab.nli.scorer import NLIConfig, NLIScorer
from hallulab.packages import local_weights_digest


@dataclass(frozen=True)
class DtypeRun:
    """One dtype's cold scoring time and the metrics of its sentence scores."""

    dtype: str
    seconds: float
    sentence_scores: np.ndarray  # mean P(contradict) over samples, sentences in passage order
    nonfact_aucpr: float
    factual_aucpr: float
    roc_auc: float


def score_with(passages: Sequence[Passage], config: NLIConfig) -> DtypeRun:
    """Score the passages cold with one dtype; metrics as the evaluate stage defines them."""
    scorer = NLIScorer(config)
    scorer.identity  # noqa: B018 - load the model outside the timed region
    started = time.perf_counter()
    matrices = passage_matrices(passages, scorer, progress=True)
    seconds = time.perf_counter() - started
    sentences = {p.id: matrices[p.id].mean(axis=1) for p in passages}
    labelled = align(passages, sentences, {key: float(value.mean()) for key, value in sentences.items()})
    metrics = compute_metrics(labelled, ProtocolConfig())
    return DtypeRun(
        dtype=config.dtype,
        seconds=seconds,
        sentence_scores=labelled.sentence_scores,
        nonfact_aucpr=metrics["nonfact_aucpr"],
        factual_aucpr=metrics["factual_aucpr"],
        roc_auc=metrics["roc_auc"],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="models/nli_minilm", help="the NLI model folder (a trained recipe)")
    parser.add_argument("--passages", type=int, default=None, help="the first N WikiBio passages (default: all)")
    parser.add_argument("--pair-order", default="sample_first", choices=("sentence_first", "sample_first"))
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    passages = [p for p in load_dataset(dataset_config("wikibio"))[0] if p.labels and p.samples]
    passages = passages[: args.passages] if args.passages else passages
    pairs = len({(s, x) for p in passages for s in p.sentences for x in p.samples})
    runs = [
        score_with(passages, NLIConfig(model=args.model, pair_order=args.pair_order, dtype=dtype))
        for dtype in ("float32", "bfloat16")
    ]
    fp32, bf16 = runs
    change = np.abs(bf16.sentence_scores - fp32.sentence_scores)
    print(f"{len(passages)} WikiBio passages, {pairs} distinct pairs, {args.threads} torch threads")
    for run in runs:
        print(
            f"{run.dtype:9s}: {pairs / run.seconds:6.1f} pairs/s ({run.seconds:.0f} s), "
            f"NonFact AUC-PR {run.nonfact_aucpr:.2f}, Factual {run.factual_aucpr:.2f}, ROC-AUC {run.roc_auc:.2f}"
        )
    print(f"speed-up {fp32.seconds / bf16.seconds:.2f}x; sentence score change: max {change.max():.4f}")
    delta = bf16.nonfact_aucpr - fp32.nonfact_aucpr
    rows = [
        BenchRow("torch_fp32", "NLIScorer float32, empty call cache", round(pairs / fp32.seconds, 1), "pairs/s", 1.0),
        BenchRow(
            "torch_bf16",
            f"NLIScorer bfloat16 (nli.dtype), empty call cache (NonFact AUC-PR {delta:+.2f} points)",
            round(pairs / bf16.seconds, 1),
            "pairs/s",
            round(fp32.seconds / bf16.seconds, 2),
        ),
    ]
    setup = {
        "dataset": "wikibio",
        "passages": len(passages),
        "distinct_pairs": pairs,
        "model": args.model,
        "model_weights": local_weights_digest(args.model),
        "pair_order": args.pair_order,
        "nonfact_aucpr": {run.dtype: round(run.nonfact_aucpr, 2) for run in runs},
        "factual_aucpr": {run.dtype: round(run.factual_aucpr, 2) for run in runs},
        "roc_auc": {run.dtype: round(run.roc_auc, 2) for run in runs},
        "sentence_score_change": {"max": round(float(change.max()), 4), "mean": round(float(change.mean()), 5)},
    }
    record("nli_bfloat16", rows, setup, threads=args.threads)


if __name__ == "__main__":
    main()
