"""Per-token statistics of a response: the record white-box methods read.

Kept apart from the LLM backends so that the cheap stages (grey-box baselines, CCP's
arithmetic) read token statistics without importing any model code.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TokenStats:
    """One token position: the token, its log-probability, the entropy of the whole
    next-token distribution at that position (nats), and the top-K alternatives
    (token text, log-probability), most probable first."""

    token: str
    logprob: float
    entropy: float | None = None
    token_id: int | None = None
    top: tuple[tuple[str, float], ...] = ()
    offset: int | None = None  # character offset in the scored / generated text

    def to_dict(self) -> dict[str, Any]:
        return {
            "token": self.token,
            "logprob": self.logprob,
            "entropy": self.entropy,
            "token_id": self.token_id,
            "top": [list(t) for t in self.top],
            "offset": self.offset,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> TokenStats:
        return cls(
            token=raw["token"],
            logprob=float(raw["logprob"]),
            entropy=None if raw.get("entropy") is None else float(raw["entropy"]),
            token_id=raw.get("token_id"),
            top=tuple((str(t), float(lp)) for t, lp in raw.get("top", [])),
            offset=raw.get("offset"),
        )


def yes_no_probability(tokens: Sequence[TokenStats]) -> float | None:
    """P(No) / (P(Yes) + P(No)) from the first reply token's top-K alternatives
    (case-insensitive, stripped of spaces and trailing punctuation), or None when neither word
    is among them. The reading of a yes / no question that needs no reply format (in the
    spirit of P(True), Kadavath et al., 2022): it works for a model that always answers "No"."""
    if not tokens:
        return None
    first = tokens[0]
    mass = {"yes": 0.0, "no": 0.0}
    for token, logprob in first.top or ((first.token, first.logprob),):
        key = token.strip().strip(".:,!").lower()
        if key in mass:
            mass[key] += math.exp(logprob)
    total = mass["yes"] + mass["no"]
    return None if total == 0 else mass["no"] / total
