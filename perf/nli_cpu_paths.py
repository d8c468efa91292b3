"""Optimised CPU paths for NLI pair scoring, measured against the float32 torch scorer.

Three candidates, each on the same (sentence, sample) pairs as ``bench_nli.py``, in the same
length-sorted batches, with the same tokenizer and truncation:

  torch int8   - ``torch.ao.quantization.quantize_dynamic`` on every ``nn.Linear`` (int8
                 weights, activations quantised per batch);
  ORT float32  - the model exported to ONNX (opset 17, dynamic batch and length) and run by
                 ONNX Runtime's CPU provider with ``threads`` intra-op threads;
  ORT int8     - that ONNX graph with dynamic int8 quantisation of its MatMul weights
                 (``onnxruntime.quantization.quantize_dynamic``).

Each gives pairs/s and the largest change of a pair's P(contradict) against float32 torch.
The project adopts a path that gives at least 3x the float32 pairs/s and moves SelfCheck-NLI's
WikiBio AUC-PR by at most 0.5 points; a path whose probabilities already move by several
points on single pairs is not a candidate for that full-set check.

The model is the 2-label export of ``bench_nli.py`` (entailment, contradiction), so column 1 of
the softmax is P(contradict), and inputs are cut at 512 tokens, the scorer's limit for it.
"""

from __future__ import annotations

import importlib
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hallulab.tooling.bench_record import BenchRow

INPUTS = ("input_ids", "attention_mask", "token_type_ids")


@dataclass(frozen=True)
class PathResult:
    """One path's speed on the pairs and how far its probabilities move from float32 torch."""

    key: str
    label: str
    pairs_per_second: float
    max_abs_change: float  # of P(contradict) against float32 torch, over every pair


def _contradiction(logits: np.ndarray) -> np.ndarray:
    """P(contradict) of the 2-label export (entailment, contradiction): softmax column 1."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    weights = np.exp(shifted)
    return weights[:, 1] / weights.sum(axis=1)


def length_sorted_batches(pairs: Sequence[tuple[str, str]], batch_size: int) -> list[list[tuple[str, str]]]:
    """The pairs sorted by length and cut into batches (little padding), as the scorer does."""
    ordered = sorted(pairs, key=lambda pair: len(pair[0]) + len(pair[1]))
    return [ordered[start : start + batch_size] for start in range(0, len(ordered), batch_size)]


def encode_pairs(tokenizer: Any, batch: Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
    """One batch as the model's numpy inputs: padded to its longest pair, cut at 512 tokens."""
    encoded = tokenizer(
        [a for a, _ in batch],
        [b for _, b in batch],
        truncation=True,
        max_length=512,
        padding=True,
        return_tensors="np",
    )
    return dict(encoded)


def torch_forward(net: Any) -> Callable[[dict[str, Any]], np.ndarray]:
    """The logits of a torch sequence classifier on one encoded batch."""
    torch = importlib.import_module("torch")

    def forward(encoded: dict[str, Any]) -> np.ndarray:
        with torch.inference_mode():
            tensors = {k: torch.from_numpy(v) for k, v in encoded.items() if k in INPUTS}
            return net(**tensors).logits.float().numpy()

    return forward


def timed_contradiction(
    batches: list[list[tuple[str, str]]], tokenizer: Any, forward: Callable[[dict[str, Any]], np.ndarray]
) -> tuple[float, np.ndarray]:
    """Seconds to encode and score every batch, and P(contradict) per pair in batch order."""
    started = time.perf_counter()
    out = [forward(encode_pairs(tokenizer, batch)) for batch in batches]
    return time.perf_counter() - started, _contradiction(np.concatenate(out))


def measure(model_dir: Path, pairs: Sequence[tuple[str, str]], *, threads: int, batch_size: int) -> list[PathResult]:
    """float32 torch first (the baseline the others are compared with), then each candidate."""
    torch = importlib.import_module("torch")
    transformers = importlib.import_module("transformers")
    ort = importlib.import_module("onnxruntime")
    quantization = importlib.import_module("onnxruntime.quantization")
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    batches = length_sorted_batches(pairs, batch_size)

    def ort_forward(path: Path) -> Callable[[dict[str, Any]], np.ndarray]:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        names = {i.name for i in session.get_inputs()}
        return lambda encoded: session.run(None, {k: v.astype(np.int64) for k, v in encoded.items() if k in names})[0]

    t_fp32, base = timed_contradiction(batches, tokenizer, torch_forward(model))
    results = [PathResult("torch_fp32", "torch float32", len(pairs) / t_fp32, 0.0)]
    int8 = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    seconds, found = timed_contradiction(batches, tokenizer, torch_forward(int8))
    results.append(
        PathResult("torch_int8", "torch int8 dynamic quantisation", len(pairs) / seconds, _change(found, base))
    )
    with tempfile.TemporaryDirectory() as tmp:
        fp32_path, int8_path = Path(tmp) / "nli.onnx", Path(tmp) / "nli.int8.onnx"
        sample = tokenizer(["a b"], ["c"], return_tensors="pt")
        present = [name for name in INPUTS if name in sample]
        torch.onnx.export(
            model,
            tuple(sample[name] for name in present),
            str(fp32_path),
            input_names=present,
            output_names=["logits"],
            dynamic_axes={**{name: {0: "batch", 1: "length"} for name in present}, "logits": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
        quantization.quantize_dynamic(str(fp32_path), str(int8_path), weight_type=quantization.QuantType.QInt8)
        for key, label, path in (
            ("ort_fp32", "ONNX Runtime float32", fp32_path),
            ("ort_int8", "ONNX Runtime int8 dynamic quantisation", int8_path),
        ):
            seconds, found = timed_contradiction(batches, tokenizer, ort_forward(path))
            results.append(PathResult(key, label, len(pairs) / seconds, _change(found, base)))
    return results


def _change(found: np.ndarray, base: np.ndarray) -> float:
    return float(np.abs(found - base).max())


def bench_rows(paths: Sequence[PathResult]) -> list[BenchRow]:
    """The report's rows: each path's pairs/s and its ratio to float32 torch (the first path),
    the others labelled with how far they move P(contradict)."""
    base = paths[0].pairs_per_second
    rows = []
    for found in paths:
        label = (
            found.label
            if found is paths[0]
            else f"{found.label} (P(contradict) moves by up to {found.max_abs_change:.3f})"
        )
        rows.append(
            BenchRow(
                found.key, label, round(found.pairs_per_second, 1), "pairs/s", round(found.pairs_per_second / base, 2)
            )
        )
    return rows
