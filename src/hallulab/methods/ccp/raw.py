"""What CCP's score step stores (:class:`hallulab.methods.raw_scores.RawScores`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hallulab.methods.raw_scores import RawScores


@dataclass
class CCPScores(RawScores):
    """``k_max``: K_max of the stored alternatives; ``contexts``: the NLI contexts scored;
    ``nli``: the NLI model's identity; ``records``: per record, per claim, the NLI class of
    every (word, alternative) pair per context and unit; ``ptrue``: the proxy's P(True) per
    claim (``{"llm": ..., "values": {record: [...]}}``); ``diagnostics``: counts."""

    k_max: int
    contexts: list[str]
    nli: dict[str, Any]
    records: dict[str, list[dict[str, Any]]]
    ptrue: dict[str, Any] = field(default_factory=dict)
    diagnostics: dict[str, Any] = field(default_factory=dict)
