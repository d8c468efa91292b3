"""Resumable NLI training: the training state on disk every few minutes.

A recipe over passage-length pairs trains for an hour or more on a laptop's CPU, and a killed
``dvc exp run``, a closed lid or a session's end would otherwise throw all of it away. While it
trains, :func:`hallulab.nli.train.train_cross_encoder` saves its whole state here: the weights,
AdamW's moments, the learning-rate schedule's position, torch's random state (dropout) and the
steps done. A run of the same recipe on the same pairs with the same code then continues from
the last save, and makes the weights an uninterrupted run makes (the test suite compares them
tensor for tensor). The save is removed once the model is written.

A save lives outside the repository, under :func:`hallulab.core.call_cache.model_dir` (DVC
deletes a stage's outputs before it runs it), in a folder named by a digest of everything that
decides the weights: the recipe's settings, every training pair, the encoder's path, the
training code and torch's version. A changed recipe or code starts from the beginning.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hallulab.core.call_cache import cache_key, model_dir
from hallulab.nli.pairs import NLIPair

log = logging.getLogger("hallulab.nli.checkpoint")

#: the folder under :func:`~hallulab.core.call_cache.model_dir` that holds the saves
CHECKPOINTS = "nli_checkpoints"
#: a save after the first step that ends this many seconds after the last save (or the start)
SAVE_EVERY_SECONDS = 300.0
STATE_FILE = "state.pt"


@dataclass(frozen=True)
class SavedTraining:
    """What a save holds: ``steps`` done (over all epochs), the state of the model, optimiser,
    schedule and torch's random generator, the losses so far and the seconds trained before."""

    steps: int
    model: dict[str, Any]
    optimizer: dict[str, Any]
    scheduler: dict[str, Any]
    torch_rng: Any
    losses: list[float]
    seconds: float


@dataclass(frozen=True)
class TrainingCheckpoint:
    """Where one training run saves its state (``folder``), and how often (``every_seconds``)."""

    folder: Path
    every_seconds: float = SAVE_EVERY_SECONDS

    @property
    def state_file(self) -> Path:
        return self.folder / STATE_FILE

    def load(self) -> SavedTraining | None:
        """The last save, or None when there is none (or it cannot be read: then it is removed
        and training starts from the beginning)."""
        import torch

        if not self.state_file.is_file():
            return None
        try:
            raw = torch.load(self.state_file, map_location="cpu", weights_only=False)
            return SavedTraining(**raw)
        except (OSError, RuntimeError, TypeError, EOFError) as error:
            log.warning("%s: unreadable training save (%s); training from the first step", self.state_file, error)
            self.clear()
            return None

    def save(self, state: SavedTraining) -> None:
        """Write ``state`` whole or not at all (a new file renamed over the last one)."""
        import torch

        self.folder.mkdir(parents=True, exist_ok=True)
        partial = self.folder / f"{STATE_FILE}.partial"
        torch.save(dataclasses.asdict(state), partial)
        os.replace(partial, self.state_file)

    def clear(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class SaveClock:
    """When the next save is due: ``every_seconds`` after the last one."""

    def __init__(self, checkpoint: TrainingCheckpoint) -> None:
        self.checkpoint = checkpoint
        self.last = time.perf_counter()

    def due(self) -> bool:
        return time.perf_counter() - self.last >= self.checkpoint.every_seconds

    def saved(self) -> None:
        self.last = time.perf_counter()


def pairs_digest(pairs: Sequence[NLIPair]) -> str:
    """SHA-256 over every pair's premise, hypothesis and label, in training order."""
    digest = hashlib.sha256()
    for pair in pairs:
        for text in (pair.premise, pair.hypothesis, pair.label):
            digest.update(text.encode("utf-8"))
            digest.update(b"\0")
    return digest.hexdigest()


def training_checkpoint(
    settings: dict[str, Any], pairs: Sequence[NLIPair], encoder: str, code_file: Path, root: Path | None = None
) -> TrainingCheckpoint:
    """The save of a run of ``settings`` (the recipe's, as a mapping) over ``pairs`` from the
    encoder at ``encoder`` by the training code in ``code_file``: its folder is named by a
    digest of those (the code by its bytes) and of torch's version."""
    import torch

    code = hashlib.sha256(code_file.read_bytes()).hexdigest()
    key = cache_key(settings, pairs_digest(pairs), encoder, code, torch.__version__)
    return TrainingCheckpoint((root or model_dir()) / CHECKPOINTS / key[:32])
