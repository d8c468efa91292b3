"""One torch thread count for every stage, whatever the machine's core count.

A float sum split over another number of threads adds in another order and rounds
differently in the last bits (``perf/cpu_reproducibility.py`` shows it for the quick NLI
model's training and SmolLM2's sampling: 1 and 2 threads give other digests). Every stage
therefore runs torch (and MKL / OpenMP under it) on the same number of threads, 2 unless
``HALLULAB_TORCH_THREADS`` says otherwise, so the committed toy outputs come out bit for bit
on a machine with more cores. ``HALLULAB_TORCH_THREADS=0`` leaves torch its own default
(every core, or ``OMP_NUM_THREADS`` where that is set: faster on a big machine, last bits
machine-dependent). A model config's own ``num_threads`` (the LLM backend, NLI training)
still wins where it is set. Only torch is pinned: numpy's BLAS is loaded before a stage
starts and keeps the environment's count (the stages' numpy work is small sums and sorts).
"""

from __future__ import annotations

import os
import sys

from hallulab.core.config import ConfigError

TORCH_THREADS_ENV = "HALLULAB_TORCH_THREADS"
#: the count the committed toy outputs were made with
STAGE_TORCH_THREADS = 2


def stage_torch_threads() -> int:
    """The thread count stages run torch on (0: torch's default)."""
    raw = os.environ.get(TORCH_THREADS_ENV, "").strip()
    if not raw:
        return STAGE_TORCH_THREADS
    if not (raw.isascii() and raw.isdigit()):
        raise ConfigError(f"{TORCH_THREADS_ENV}={raw!r}: expected a whole number of threads (0 = every core)")
    return int(raw)


def fix_torch_threads() -> int:
    """Pin torch's intra-op threads for this process; returns the count (0: left alone).

    Sets ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS`` for a torch imported later (OpenMP reads
    them when it loads) and calls ``torch.set_num_threads`` on one already imported."""
    threads = stage_torch_threads()
    if threads:
        os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(threads)
        torch = sys.modules.get("torch")
        if torch is not None:
            torch.set_num_threads(threads)
    return threads
