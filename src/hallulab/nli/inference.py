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
import os
import shutil
from collections.abc import Sequence
from typing import Any


def inductor_cpp_compiler() -> str:
    """The C++ compiler Inductor calls on Linux: ``$CXX``, else ``g++``."""
    return os.environ.get("CXX", "g++")


def compiled_for_inference(model: Any, device: str) -> Any:
    """``model`` compiled by ``torch.compile`` for inference (the ``nli.compile`` knob).

    Inductor's freezing folds the weights into the graph as constants: on the CPU, linear
    layers become oneDNN matrix products on prepacked weights with the bias and GELU fused
    into them, where eager PyTorch copies the bias into every output and runs GELU, the
    residual additions and layer norms as separate passes over memory. ``dynamic=True``
    makes one graph serve every batch size and sequence length, so a data set compiles once
    (compiling is slow, so Inductor caches the result on disk for the next run). On the CPU,
    Inductor builds C++ kernels, so it needs a C++ compiler; without one this fails here, in
    one line, instead of inside the first batch.
    """
    compiler = inductor_cpp_compiler()
    if device == "cpu" and shutil.which(compiler) is None:
        raise RuntimeError(
            f"nli.compile needs a C++ compiler ({compiler}, from $CXX or else g++) on the CPU for "
            "torch.compile's generated kernels; install one (apt-get install g++) or set nli.compile=false"
        )
    import torch

    # Set process-wide, as the benchmark ran it. Freezing is a field of torch's private
    # torch._inductor.config, and torch has no public route that freezes the weights:
    # torch.compile(model, options={"freezing": True}) sets it only inside Inductor's backend
    # call, but Dynamo reads it earlier, while it traces the first call (and any recompile),
    # to keep the weights in the graph as constants instead of inputs. Through the options
    # alone Inductor gets the weights as inputs, has nothing to fold, and builds the kernels
    # of an unfrozen compile (other numbers). No other step of hallulab uses torch.compile.
    inductor_config: Any = importlib.import_module("torch._inductor.config")
    inductor_config.freezing = True
    return torch.compile(model, dynamic=True)


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
    min_batch_rows: int = 1,
) -> Any:
    """(n, num_labels) float32 CPU tensor of logits for the (text, text_pair) pairs; with a
    ``progress`` label, a progress bar with an ETA over the pairs (stderr).

    A batch shorter than ``min_batch_rows`` repeats its last pair to that size and keeps its
    own rows: a compiled model (:func:`compiled_for_inference`) passes 2, because
    ``torch.compile`` specialises a dimension of size 1 even with ``dynamic=True``, so a
    one-pair batch (a one-pair request, or the last batch of a request) would otherwise
    compile a second graph."""
    import torch

    order = sorted(range(len(texts)), key=lambda i: len(texts[i]) + len(text_pairs[i]))
    out = torch.empty((len(texts), model.config.num_labels), dtype=torch.float32)
    bar = None
    if progress is not None:
        from tqdm import tqdm

        bar = tqdm(total=len(order), desc=progress, unit="pair", mininterval=5)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        rows = chunk + chunk[-1:] * (min_batch_rows - len(chunk))
        encoded = tokenizer(
            [texts[i] for i in rows],
            [text_pairs[i] for i in rows],
            truncation=True,
            max_length=max_length,
            padding=True,
            pad_to_multiple_of=pad_to_multiple_of,
            return_tensors="pt",
        ).to(device)
        with torch.inference_mode():
            out[chunk] = model(**encoded).logits.float().cpu()[: len(chunk)]
        if bar is not None:
            bar.update(len(chunk))
    if bar is not None:
        bar.close()
    return out
