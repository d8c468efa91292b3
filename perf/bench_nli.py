"""Benchmark: SelfCheck-NLI pairs per second, hallulab vs the reference selfcheckgpt 0.1.7.

Same model, same (sentence, sample) pairs, CPU, one process. The model is the offline
cross-encoder (models/nli_minilm from `dvc repro train_nli`, or --model) exported with its
neutral row removed, the 2-label shape the reference's ``softmax(logits)[1]`` expects;
the reference is loaded through the Auto classes (it hard-codes DeBERTa-v2).

  reference - SelfCheckNLI.predict per passage: one forward pass per pair;
  cold      - NLIScorer with an empty call cache: distinct pairs, length-sorted batches;
  warm      - the same request again (what a re-run or an N sweep pays);
  bf16      - cold again with ``nli.dtype: bfloat16`` (not the parity setting; faster than
              float32 only where the CPU has AMX, see ``machine.cpu_features``);
  ov_int8   - cold again with ``nli.runtime: openvino_int8`` (OpenVINO, NNCF static int8; the
              quantised graph is made before the timed region, as the model is loaded).

Then the optimised CPU paths (:mod:`nli_cpu_paths`: torch int8, ONNX Runtime float32 and int8)
on the same distinct pairs, against float32 torch, into the section ``nli_cpu``.

Prints pairs/s for each and the ratios, and checks the two agree to 1e-4. Usage:

    python perf/bench_nli.py [--passages 4] [--samples 20] [--threads 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
from nli_cpu_paths import bench_rows, measure

from hallulab.core.call_cache import CallCache
from hallulab.core.config import dataset_config
from hallulab.data.loaders import load_dataset
from hallulab.methods.selfcheck_nli.score import record_matrices
from hallulab.nli.scorer import NLIKnobs, NLIScorer
from hallulab.nli.train import export_two_label
from hallulab.tooling.bench_record import BenchRow, record
from hallulab.tooling.reference import reference_nli

WIKIBIO = dataset_config("wikibio")  # source: auto (local copy under $HALLULAB_DATA_ROOT, else the hub)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="models/nli_minilm")
    parser.add_argument("--passages", type=int, default=4)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    records = [replace(p, samples=p.samples[: args.samples]) for p in load_dataset(WIKIBIO)[0][: args.passages]]
    pairs = sum(len(p.sentences) * len(p.samples) for p in records)
    with tempfile.TemporaryDirectory() as tmp:
        two = export_two_label(Path(args.model), Path(tmp) / "two")
        reference = reference_nli(str(two))
        started = time.perf_counter()
        theirs = {p.id: reference.predict(list(p.sentences), list(p.samples)) for p in records}
        t_reference = time.perf_counter() - started

        with CallCache(Path(tmp) / "calls.sqlite") as cache:
            scorer = NLIScorer(NLIKnobs(model=str(two), batch_size=args.batch_size), cache=cache)
            scorer.identity  # noqa: B018 - load the model outside the timed region, as the reference did
            started = time.perf_counter()
            ours = record_matrices(records, scorer)
            t_cold = time.perf_counter() - started
            started = time.perf_counter()
            record_matrices(records, scorer)
            t_warm = time.perf_counter() - started
            half = NLIScorer(NLIKnobs(model=str(two), batch_size=args.batch_size, dtype="bfloat16"), cache=cache)
            half.identity  # noqa: B018
            started = time.perf_counter()
            ours_bf16 = record_matrices(records, half)
            t_bf16 = time.perf_counter() - started
            int8 = NLIScorer(NLIKnobs(model=str(two), batch_size=args.batch_size, runtime="openvino_int8"), cache=cache)
            int8.identity  # noqa: B018 - converts and calibrates the int8 graph
            started = time.perf_counter()
            ours_int8 = record_matrices(records, int8)
            t_int8 = time.perf_counter() - started
        distinct = list(dict.fromkeys((s, x) for p in records for s in p.sentences for x in p.samples))
        paths = measure(two, distinct, threads=args.threads, batch_size=args.batch_size)

    worst = max(float(np.abs(ours[p.id].mean(axis=1) - theirs[p.id]).max()) for p in records)
    worst_bf16 = max(float(np.abs(ours_bf16[p.id].mean(axis=1) - theirs[p.id]).max()) for p in records)
    worst_int8 = max(float(np.abs(ours_int8[p.id].mean(axis=1) - theirs[p.id]).max()) for p in records)
    print(f"{len(records)} WikiBio passages, {pairs} (sentence, sample) pairs, {args.threads} torch threads")
    print(f"reference SelfCheckNLI: {t_reference:8.2f} s  {pairs / t_reference:9.1f} pairs/s")
    print(f"hallulab cold         : {t_cold:8.2f} s  {pairs / t_cold:9.1f} pairs/s  ({t_reference / t_cold:.1f}x)")
    print(f"hallulab warm (cache) : {t_warm:8.2f} s  {pairs / t_warm:9.1f} pairs/s  ({t_reference / t_warm:.0f}x)")
    print(f"hallulab cold, bf16   : {t_bf16:8.2f} s  {pairs / t_bf16:9.1f} pairs/s  ({t_reference / t_bf16:.1f}x)")
    print(f"hallulab cold, int8 OV : {t_int8:8.2f} s  {pairs / t_int8:9.1f} pairs/s  ({t_reference / t_int8:.1f}x)")
    print(
        f"max |difference| of sentence scores vs reference: float32 {worst:.2e}, bfloat16 {worst_bf16:.2e}, "
        f"OpenVINO int8 {worst_int8:.2e}"
    )
    rate = pairs / t_reference
    rows = [
        BenchRow(
            "reference", "selfcheckgpt 0.1.7 SelfCheckNLI (one forward pass per pair)", round(rate, 1), "pairs/s", 1.0
        ),
        BenchRow(
            "fp32",
            "hallulab float32, empty call cache",
            round(pairs / t_cold, 1),
            "pairs/s",
            round(t_reference / t_cold, 2),
        ),
        BenchRow(
            "bf16",
            "hallulab bfloat16, empty call cache",
            round(pairs / t_bf16, 1),
            "pairs/s",
            round(t_reference / t_bf16, 2),
        ),
        BenchRow(
            "ov_int8",
            "hallulab nli.runtime=openvino_int8 (OpenVINO, NNCF static int8), empty call cache",
            round(pairs / t_int8, 1),
            "pairs/s",
            round(t_reference / t_int8, 2),
        ),
        BenchRow(
            "warm",
            "hallulab, the same request again (call cache)",
            round(pairs / t_warm, 1),
            "pairs/s",
            round(t_reference / t_warm, 1),
        ),
    ]
    setup = {
        "dataset": "wikibio",
        "passages": len(records),
        "pairs": pairs,
        "model": args.model,
        "max_abs_difference": {
            "float32": float(f"{worst:.2e}"),
            "bfloat16": float(f"{worst_bf16:.2e}"),
            "openvino_int8": float(f"{worst_int8:.2e}"),
        },
    }
    record("nli", rows, setup, threads=args.threads)
    for row in bench_rows(paths):
        print(f"{row.label}: {row.value} pairs/s ({row.ratio}x float32 torch)")
    cpu_setup = {
        "dataset": "wikibio",
        "passages": len(records),
        "distinct_pairs": len(distinct),
        "model": args.model,
        "max_abs_change": {found.key: float(f"{found.max_abs_change:.3g}") for found in paths},
    }
    record("nli_cpu", bench_rows(paths), cpu_setup, threads=args.threads)


if __name__ == "__main__":
    main()
