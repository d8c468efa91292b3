"""Probe: OpenVINO static int8 for SelfCheck-NLI pair scoring, paired against float32 torch.

Issue 21 §3 asks for an NLI path on the CPU with at least 3x the float32 pairs/s that moves
SelfCheck-NLI's NonFact AUC-PR on WikiBio by at most half a point. ``nli_cpu_paths.py`` measures
the dynamic-quantisation paths (neither reaches 3x, and both move single probabilities by
tenths; their ratios are the ``nli_cpu`` section of ``perf/results.json``). This probe
measures the static one: the 2-label export of the offline cross-encoder converted to
OpenVINO and quantised post-training by NNCF (int8 weights and activations, activation
ranges calibrated on NLI training pairs: the first 180 FEVER and 180 MNLI pairs of the
training sources, never a WikiBio pair), against float32 torch on the same length-sorted
batches of the first ``--passages`` WikiBio passages' distinct (sentence, sample) pairs.
Both paths' P(contradict) are averaged over the samples into sentence scores and scored
with the project's NonFact AUC-PR and ROC-AUC, so the change of the metric is paired.

It is a probe, not a scorer path: ``openvino`` and ``nncf`` are not in the project's lock
(``pip install openvino nncf`` into the venv first). It records the section ``nli_openvino``
of ``perf/results.json``. Usage:

    python perf/probe_openvino_int8.py [--passages 80] [--model models/nli_minilm]
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from nli_cpu_paths import INPUTS, encode_pairs, length_sorted_batches, timed_contradiction, torch_forward

from hallulab.core.config import dataset_config
from hallulab.data.loaders import DATA_ROOT_ENV, load_dataset
from hallulab.data.schema import Record
from hallulab.evaluation.metrics import aucpr_trapezoid, roc_auc
from hallulab.evaluation.protocol import ProtocolKnobs
from hallulab.nli.data import training_sources
from hallulab.nli.train import export_two_label
from hallulab.tooling.bench_record import BenchRow, record

CALIBRATION_PAIRS_PER_SOURCE = 180


@dataclass(frozen=True)
class PathScores:
    """One path's speed and the SelfCheck-NLI metrics its probabilities give."""

    seconds: float
    probabilities: np.ndarray  # P(contradict) per pair, in batch order
    nonfact_aucpr: float
    roc_auc: float


def _metrics(records: Sequence[Record], order: Sequence[tuple[str, str]], probs: np.ndarray) -> tuple[float, float]:
    """NonFact AUC-PR and ROC-AUC (percent) of the sentence scores: mean P(contradict) over samples."""
    value = dict(zip(order, probs.tolist(), strict=True))
    threshold = ProtocolKnobs().nonfact_threshold
    scores, labels = [], []
    for one in records:
        for sentence, label in zip(one.sentences, one.labels or (), strict=True):
            scores.append(float(np.mean([value[(sentence, sample)] for sample in one.samples])))
            labels.append(label > threshold)
    y, s = np.asarray(labels), np.asarray(scores)
    return 100 * aucpr_trapezoid(y, s), 100 * roc_auc(y, s)


def _timed(
    records: Sequence[Record],
    batches: list[list[tuple[str, str]]],
    tokenizer: Any,
    forward: Callable[[dict[str, Any]], np.ndarray],
) -> PathScores:
    seconds, probs = timed_contradiction(batches, tokenizer, forward)
    order = [pair for batch in batches for pair in batch]
    aucpr, roc = _metrics(records, order, probs)
    return PathScores(seconds, probs, aucpr, roc)


def _calibration(tokenizer: Any, root: Path) -> list[dict[str, np.ndarray]]:
    sources = training_sources(root)
    pairs = [
        (pair.premise, pair.hypothesis)
        for name in ("fever", "mnli")
        for pair in itertools.islice(sources[name](), CALIBRATION_PAIRS_PER_SOURCE)
    ]
    encoded = (encode_pairs(tokenizer, batch) for batch in length_sorted_batches(pairs, 8))
    return [{name: batch[name].astype(np.int64) for name in INPUTS} for batch in encoded]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="models/nli_minilm")
    parser.add_argument("--passages", type=int, default=80)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    ov = importlib.import_module("openvino")
    nncf = importlib.import_module("nncf")
    transformers = importlib.import_module("transformers")
    torch.set_num_threads(args.threads)
    root = Path(os.environ[DATA_ROOT_ENV])

    wikibio = load_dataset(dataset_config("wikibio"))[0]
    records = [replace(p, samples=p.samples[: args.samples]) for p in wikibio[: args.passages]]
    pairs = list(dict.fromkeys((s, x) for p in records for s in p.sentences for x in p.samples))
    batches = length_sorted_batches(pairs, args.batch_size)
    with tempfile.TemporaryDirectory() as tmp:
        two = export_two_label(Path(args.model), Path(tmp) / "two")
        tokenizer = transformers.AutoTokenizer.from_pretrained(two)
        model = transformers.AutoModelForSequenceClassification.from_pretrained(two).eval()

        fp32 = _timed(records, batches, tokenizer, torch_forward(model))
        sample = tokenizer(["a b"], ["c"], return_tensors="pt")
        graph = ov.convert_model(model, example_input={name: sample[name] for name in INPUTS})
        calibration = _calibration(tokenizer, root)
        quantised = nncf.quantize(
            graph, nncf.Dataset(calibration), model_type=nncf.ModelType.TRANSFORMER, subset_size=len(calibration)
        )
        compiled = ov.Core().compile_model(
            quantised, "CPU", {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": args.threads}
        )
        request = compiled.create_infer_request()

        def ov_forward(encoded: dict[str, Any]) -> np.ndarray:
            inputs = {k: v.astype(np.int64) for k, v in encoded.items() if k in INPUTS}
            return np.asarray(next(iter(request.infer(inputs).values())))

        timed_contradiction(batches[:2], tokenizer, ov_forward)  # first shapes compile outside the timed pass
        int8 = _timed(records, batches, tokenizer, ov_forward)

    change = np.abs(int8.probabilities - fp32.probabilities)
    print(f"{len(records)} WikiBio passages, {len(pairs)} distinct pairs, {args.threads} threads")
    for name, found in (("torch float32", fp32), ("OpenVINO static int8", int8)):
        print(
            f"{name:22s}: {len(pairs) / found.seconds:6.1f} pairs/s, "
            f"NonFact AUC-PR {found.nonfact_aucpr:.2f}, ROC-AUC {found.roc_auc:.2f}"
        )
    print(f"P(contradict) change: max {change.max():.3f}, mean {change.mean():.4f}")
    rows = [
        BenchRow("torch_fp32", "torch float32", round(len(pairs) / fp32.seconds, 1), "pairs/s", 1.0),
        BenchRow(
            "ov_int8_static",
            "OpenVINO static int8, NNCF-calibrated on 360 NLI training pairs "
            f"(NonFact AUC-PR {int8.nonfact_aucpr - fp32.nonfact_aucpr:+.2f} points, "
            f"ROC-AUC {int8.roc_auc - fp32.roc_auc:+.2f})",
            round(len(pairs) / int8.seconds, 1),
            "pairs/s",
            round(fp32.seconds / int8.seconds, 2),
        ),
    ]
    setup = {
        "dataset": "wikibio",
        "passages": len(records),
        "distinct_pairs": len(pairs),
        "model": args.model,
        "openvino": ov.__version__,
        "nncf": nncf.__version__,
        "calibration": f"the first {CALIBRATION_PAIRS_PER_SOURCE} FEVER and MNLI training pairs each",
        "nonfact_aucpr": {"torch_fp32": round(fp32.nonfact_aucpr, 2), "ov_int8_static": round(int8.nonfact_aucpr, 2)},
        "roc_auc": {"torch_fp32": round(fp32.roc_auc, 2), "ov_int8_static": round(int8.roc_auc, 2)},
        "p_contradict_change": {"max": round(float(change.max()), 3), "mean": round(float(change.mean()), 4)},
    }
    record("nli_openvino", rows, setup, threads=args.threads)


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"probe took {time.perf_counter() - start:.0f} s")
