"""Batched NLI inference shared by the SelfCheck-NLI scorer and held-out evaluation.

Pairs are sorted by length and run in batches (little padding), under
``torch.inference_mode``; the logits come back in the input order. With
``pad_to_multiple_of``, each batch's length is rounded up to that multiple: the CPU's
bfloat16 kernels (oneDNN on AMX) are built once per input shape, so a handful of padded
lengths is built once and reused across the data set, where exact lengths would build a new
kernel for most batches. Padding is masked, so it changes no score beyond rounding.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any


def pair_logits(
    tokenizer: Any,
    model: Any,
    texts: Sequence[str],
    text_pairs: Sequence[str],
    *,
    batch_size: int,
    max_length: int,
    device: str = "cpu",
    progress: str | None = None,
    pad_to_multiple_of: int | None = None,
) -> Any:
    """(n, num_labels) float32 CPU tensor of logits for the (text, text_pair) pairs; with a
    ``progress`` label, a progress bar with an ETA over the pairs (stderr)."""
    torch = importlib.import_module("torch")
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]) + len(text_pairs[i]))
    out = torch.empty((len(texts), model.config.num_labels), dtype=torch.float32)
    bar = None
    if progress is not None:
        from tqdm import tqdm

        bar = tqdm(total=len(order), desc=progress, unit="pair", mininterval=5)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        encoded = tokenizer(
            [texts[i] for i in chunk],
            [text_pairs[i] for i in chunk],
            truncation=True,
            max_length=max_length,
            padding=True,
            pad_to_multiple_of=pad_to_multiple_of,
            return_tensors="pt",
        ).to(device)
        with torch.inference_mode():
            out[chunk] = model(**encoded).logits.float().cpu()
        if bar is not None:
            bar.update(len(chunk))
    if bar is not None:
        bar.close()
    return out
