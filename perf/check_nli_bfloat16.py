"""Full-set check: SelfCheck-NLI on WikiBio with the NLI scorer's fast CPU paths against float32.

Issue 21 §3 asks for an NLI path on the CPU with at least 3x the float32 pairs/s that moves
SelfCheck-NLI's NonFact AUC-PR on WikiBio by at most half a point. The paths measured:

- ``bf16``: the scorer's ``nli.dtype: bfloat16`` knob. It pays where the CPU multiplies
  bfloat16 matrices in hardware (Intel AMX, flag ``amx_bf16``); where it only converts them
  (no AMX) it is slower than float32, which is why ``machine.cpu_features`` is recorded
  beside the ratio.
- ``bf16_compiled``: the same with ``nli.compile: true`` (``torch.compile`` with Inductor's
  freezing: prepacked oneDNN weights, bias and GELU fused). Its time includes compiling
  from nothing: an empty Inductor cache (a temporary ``TORCHINDUCTOR_CACHE_DIR``) and a
  fresh temporary root for the precompiled header Inductor keeps outside it, so it is what
  a first run on a machine pays (``setup.compile_seconds`` says how much of it).

Every path scores every distinct (sample, sentence) pair of the chosen WikiBio passages
through the project's :class:`~hallulab.nli.scorer.NLIScorer` (no call cache, so each is
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

Records the section ``nli_bfloat16`` of ``perf/results.json``. Usage:

    python perf/check_nli_bfloat16.py [--model models/nli_minilm] [--passages 238]
        [--pair-order sample_first] [--paths bf16 bf16_compiled]
"""

from __future__ import annotations

import argparse
import importlib
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from hallulab.core.config import dataset_config
from hallulab.core.package_files import local_weights_digest
from hallulab.data.loaders import load_dataset
from hallulab.data.schema import Record
from hallulab.evaluation.protocol import ProtocolKnobs, align, compute_metrics
from hallulab.methods.selfcheck_nli.score import record_matrices
from hallulab.nli.scorer import NLIKnobs, NLIScorer
from hallulab.tooling.bench_record import BenchRow, record

T = TypeVar("T")


@dataclass(frozen=True)
class ScorerPath:
    """One measured path: its key, its label and the scorer settings it changes."""

    key: str
    label: str
    dtype: str
    compile: bool = False
    device: str = "cpu"
    batch_size: int = 32  # the scorer's default (nli.batch_size)


FLOAT32 = ScorerPath("fp32", "NLIScorer float32, empty call cache", "float32")
FAST_PATHS = (
    ScorerPath("bf16", "NLIScorer bfloat16 (nli.dtype), empty call cache", "bfloat16"),
    ScorerPath(
        "bf16_compiled",
        "NLIScorer bfloat16 + nli.compile, empty call cache, compiled from nothing (compiling included)",
        "bfloat16",
        compile=True,
    ),
)


@dataclass(frozen=True)
class PathRun:
    """One path's cold scoring time (of which compiling, for a compiled path) and the
    metrics of its sentence scores."""

    path: ScorerPath
    seconds: float
    compile_seconds: float | None
    sentence_scores: np.ndarray  # mean P(contradict) over samples, sentences in passage order
    nonfact_aucpr: float
    factual_aucpr: float
    roc_auc: float


def cold_temporary_root() -> None:
    """Point the process's temporary folder at a new, empty one, before torch is imported.

    Inductor keeps a precompiled header under the temporary folder (fixed when its code
    cache is imported, and kept outside ``TORCHINDUCTOR_CACHE_DIR`` on purpose, to outlive
    runs); with a fresh root, a compiled path pays everything a first run on a machine
    pays."""
    root = tempfile.mkdtemp(prefix="hallulab-cold-")
    os.environ["TMPDIR"] = root
    tempfile.tempdir = root


def timed_in_empty_inductor_cache(warm_up: Callable[[], object], run: Callable[[], T]) -> tuple[T, float, float]:
    """``warm_up()`` then ``run()`` in one timed region, with an empty Inductor cache (a
    temporary ``TORCHINDUCTOR_CACHE_DIR``): (run's result, total seconds, warm-up seconds).
    For a compiled path the warm-up is a one-pair call, so its seconds are the compile."""
    with tempfile.TemporaryDirectory() as inductor_cache:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = inductor_cache
        try:
            started = time.perf_counter()
            warm_up()
            warm_up_seconds = time.perf_counter() - started
            result = run()
            return result, time.perf_counter() - started, warm_up_seconds
        finally:
            del os.environ["TORCHINDUCTOR_CACHE_DIR"]


def score_with(records: Sequence[Record], path: ScorerPath, model: str, pair_order: str) -> PathRun:
    """Score the passages cold with one path; metrics as the evaluate stage defines them.

    A compiled path compiles in a one-pair call first (inside the timed region, with an
    empty Inductor cache), so the compile time is recorded apart from the total."""
    config = NLIKnobs(
        model=model,
        pair_order=pair_order,
        dtype=path.dtype,
        compile=path.compile,
        device=path.device,
        batch_size=path.batch_size,
    )
    scorer = NLIScorer(config)
    scorer.load()  # outside the timed region

    def compile_on_one_pair() -> None:
        if path.compile:
            scorer.pair_probs(records[0].sentences[:1], records[0].samples[:1])

    matrices, seconds, warm_up_seconds = timed_in_empty_inductor_cache(
        compile_on_one_pair, lambda: record_matrices(records, scorer, progress=True)
    )
    compile_seconds = warm_up_seconds if path.compile else None
    sentences = {p.id: matrices[p.id].mean(axis=1) for p in records}
    labelled = align(records, sentences, {key: float(value.mean()) for key, value in sentences.items()})
    metrics = compute_metrics(labelled, ProtocolKnobs())
    return PathRun(
        path=path,
        seconds=seconds,
        compile_seconds=compile_seconds,
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
    keys = [path.key for path in FAST_PATHS]
    parser.add_argument("--paths", nargs="+", default=keys, choices=keys, help="the paths beside float32")
    args = parser.parse_args()
    cold_temporary_root()
    torch = importlib.import_module("torch")
    torch.set_num_threads(args.threads)

    records = [p for p in load_dataset(dataset_config("wikibio"))[0] if p.labels and p.samples]
    records = records[: args.passages] if args.passages else records
    pairs = len({(s, x) for p in records for s in p.sentences for x in p.samples})
    chosen = [path for path in FAST_PATHS if path.key in args.paths]  # each once, in a fixed order
    runs = [score_with(records, path, args.model, args.pair_order) for path in (FLOAT32, *chosen)]
    fp32 = runs[0]
    print(f"{len(records)} WikiBio passages, {pairs} distinct pairs, {args.threads} torch threads")
    changes = {run.path.key: np.abs(run.sentence_scores - fp32.sentence_scores) for run in runs}
    rows = []
    for run in runs:
        change = changes[run.path.key]
        delta = run.nonfact_aucpr - fp32.nonfact_aucpr
        speedup = fp32.seconds / run.seconds
        print(
            f"{run.path.key:14s}: {pairs / run.seconds:6.1f} pairs/s ({run.seconds:.0f} s, {speedup:.2f}x), "
            f"NonFact AUC-PR {run.nonfact_aucpr:.2f} ({delta:+.2f}), Factual {run.factual_aucpr:.2f}, "
            f"ROC-AUC {run.roc_auc:.2f}; sentence score change max {change.max():.4f}"
        )
        label = run.path.label + ("" if run is fp32 else f" (NonFact AUC-PR {delta:+.2f} points)")
        rows.append(
            BenchRow(f"torch_{run.path.key}", label, round(pairs / run.seconds, 1), "pairs/s", round(speedup, 2))
        )
        if run.compile_seconds is not None:
            scoring = run.seconds - run.compile_seconds
            print(f"{'':14s}  once compiled: {pairs / scoring:6.1f} pairs/s ({fp32.seconds / scoring:.2f}x)")
            rows.append(
                BenchRow(
                    f"torch_{run.path.key}_once_compiled",
                    "the same run once compiled (its time less the compile: the rate a longer data set approaches)",
                    round(pairs / scoring, 1),
                    "pairs/s",
                    round(fp32.seconds / scoring, 2),
                )
            )
    setup = {
        "dataset": "wikibio",
        "passages": len(records),
        "distinct_pairs": pairs,
        "model": args.model,
        "model_weights": local_weights_digest(args.model),
        "pair_order": args.pair_order,
        "nonfact_aucpr": {run.path.key: round(run.nonfact_aucpr, 2) for run in runs},
        "factual_aucpr": {run.path.key: round(run.factual_aucpr, 2) for run in runs},
        "roc_auc": {run.path.key: round(run.roc_auc, 2) for run in runs},
        "compile_seconds": {
            run.path.key: round(run.compile_seconds, 1) for run in runs if run.compile_seconds is not None
        },
        "sentence_score_change": {
            run.path.key: {
                "max": round(float(changes[run.path.key].max()), 4),
                "mean": round(float(changes[run.path.key].mean()), 5),
            }
            for run in runs[1:]
        },
    }
    record("nli_bfloat16", rows, setup, threads=args.threads)


if __name__ == "__main__":
    main()
