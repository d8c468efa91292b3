"""What the four MQAG roles provide (G1 + G2 questions, A answer distributions, U
answerability), as a protocol both implementations follow (:mod:`.roles`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np


@dataclass(frozen=True)
class GeneratedQuestion:
    question: str
    options: tuple[str, ...]
    answer_index: int


@dataclass
class RoleCounts:
    """How often each parsing rule fired (reported in the stage diagnostics)."""

    counts: Counter[str] = field(default_factory=Counter)

    def add(self, name: str, amount: int = 1) -> None:
        self.counts[name] += amount


class MQAGRoles(Protocol):
    counts: RoleCounts

    @property
    def identity(self) -> dict[str, Any]: ...

    def questions(
        self, sentences: Sequence[str], passages: Sequence[str], seeds: Sequence[int]
    ) -> list[GeneratedQuestion | None]: ...

    def answer(self, questions: Sequence[GeneratedQuestion], contexts: Sequence[str]) -> np.ndarray: ...

    def answerability(self, questions: Sequence[GeneratedQuestion], contexts: Sequence[str]) -> np.ndarray: ...
