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
    (token text, log-probability), most probable first; ``top_ids`` their vocabulary ids in the
    same order where the backend gives them (empty otherwise). A token's text does not name it:
    in a byte-level vocabulary the ids of fragments of multi-byte characters decode to the same
    replacement character (SmolLM2's: 312 ids share three texts), so "the same token" is a
    question for the ids (:func:`same_token`)."""

    token: str
    logprob: float
    entropy: float | None = None
    token_id: int | None = None
    top: tuple[tuple[str, float], ...] = ()
    offset: int | None = None  # character offset in the scored / generated text
    top_ids: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.top_ids and len(self.top_ids) != len(self.top):
            raise ValueError(f"top_ids: {len(self.top_ids)} ids for {len(self.top)} alternatives")

    @property
    def ids_known(self) -> bool:
        """Whether the written token and every alternative carry their vocabulary ids."""
        return self.token_id is not None and len(self.top_ids) == len(self.top) > 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "token": self.token,
            "logprob": self.logprob,
            "entropy": self.entropy,
            "token_id": self.token_id,
            "top": [list(t) for t in self.top],
            "offset": self.offset,
        }
        if self.top_ids:  # absent where the backend gave none: token files written before stay as they were
            out["top_ids"] = list(self.top_ids)
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> TokenStats:
        return cls(
            token=raw["token"],
            logprob=float(raw["logprob"]),
            entropy=None if raw.get("entropy") is None else float(raw["entropy"]),
            token_id=raw.get("token_id"),
            top=tuple((str(t), float(lp)) for t, lp in raw.get("top", [])),
            offset=raw.get("offset"),
            top_ids=tuple(int(i) for i in raw.get("top_ids", [])),
        )


def same_token(token: TokenStats, index: int) -> bool:
    """Whether the ``index``-th alternative of ``token.top`` is the written token: by id where
    both ids are known (:attr:`TokenStats.ids_known`), else by decoded text (a backend that
    returns no ids; two tokens with the same text are then taken for one)."""
    if token.ids_known:
        return token.top_ids[index] == token.token_id
    return token.top[index][0] == token.token


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
