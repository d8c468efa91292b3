"""The ``atomic_facts`` artifact's knob class, kept apart from the code that builds the
artifact so that declaring it imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.artifacts.atomic_facts import TAGGINGS
from hallulab.core.config import setting


@dataclass(frozen=True)
class AtomicFactsKnobs:
    """params ``atomic_facts``."""

    taggings: tuple[str, ...] = setting(TAGGINGS, choices=TAGGINGS, scalar_ok=True)
    seed: int = 0
