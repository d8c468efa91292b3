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
    #: the label under which the A and U calls are cached and counted as a model request
    #: (:meth:`hallulab.core.call_cache.CallCache.map`'s ``progress``), or None when every call
    #: the roles make already goes through the call cache and is counted there (the LLM
    #: substitute: each prompt is an LLM call of its ``qa`` role)
    answer_call_label: str | None

    @property
    def identity(self) -> dict[str, Any]: ...

    def questions(
        self, sentences: Sequence[str], passages: Sequence[str], seeds: Sequence[int]
    ) -> list[GeneratedQuestion | None]: ...

    def answer(self, questions: Sequence[GeneratedQuestion], contexts: Sequence[str]) -> np.ndarray: ...

    def answerability(self, questions: Sequence[GeneratedQuestion], contexts: Sequence[str]) -> np.ndarray: ...
