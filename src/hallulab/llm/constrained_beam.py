"""Constrained beam search with one disjunctive constraint (Anderson et al., 2017; the search
Self-Familiarity §3.2.2 Eq. 4 runs to make the model name the concept).

The constraint is a set of token sequences (the concept's case forms, each with and without
a leading space); a finished hypothesis must contain at least one of them contiguously.
transformers 5 no longer ships constrained beam search (it fetches it from the hub), so the
search lives here, independent of any model: it asks a :class:`NextTokenModel` for the
next-token log-probabilities of the live hypotheses, one step at a time.

Each step:

1. every live hypothesis proposes its ``beam_size`` most likely next tokens, and, while its
   constraint is unmet, the tokens that start a constraint sequence or continue the one it
   has partly written (the forced tokens that keep the constraint reachable);
2. a candidate that ends (end-of-sequence token, or the length limit) is kept as a finished
   hypothesis only if it meets the constraint;
3. the other candidates are put in banks by their progress through the constraint (met;
   k tokens of a sequence written; none) and the next beam takes the best of each bank in
   turn, from the most advanced bank down (the bank allocation of Hokamp & Liu, 2017, that
   transformers' former ``ConstrainedBeamSearchScorer`` used), so hypotheses that make
   progress are not crowded out by likelier ones that make none.

Scores are sums of token log-probabilities; the search returns up to ``beam_size`` finished
hypotheses, best first by the length-normalised score ``sum / (P + length)`` (length penalty
1), where ``P = prompt_length``: 0 normalises by the answer alone; the prompt's length is what
transformers' beam scorer added for a decoder-only model before 4.36 (it divided by the whole
sequence), the reading of the released Self-Familiarity code, which returns the best of these.
A hypothesis that ends with the end-of-sequence token counts that token's log-probability in
its sum but not in its length, as that scorer did (it stored the sequence before the EOS token).
With a beam at least as wide as the number of sequences, the search is exhaustive: it
returns the best constrained sequence (the test compares it with brute-force enumeration).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np


class NextTokenModel(Protocol):
    """What the search needs from a model."""

    def start(self) -> np.ndarray:
        """Log-probabilities of the first generated token after the prompt: shape [1, V]."""

    def advance(self, parents: Sequence[int], tokens: Sequence[int]) -> np.ndarray:
        """New rows: row i extends row ``parents[i]`` of the previous call's rows with
        ``tokens[i]``; returns their next-token log-probabilities, shape [len(parents), V]."""


@dataclass(frozen=True)
class ConstrainedHypothesis:
    """A finished hypothesis that meets the constraint."""

    tokens: tuple[int, ...]  # generated tokens (the end-of-sequence token excluded)
    logprob: float  # sum of the log-probabilities of the generated tokens (EOS included when it ended there)
    length: int  # len(tokens): the EOS token is not counted
    ended: str  # "eos" or "length"

    def score(self, prompt_length: int = 0) -> float:
        """sum / (P + length): the ranking score with ``prompt_length`` P."""
        return self.logprob / max(self.length + prompt_length, 1)

    @property
    def normalised(self) -> float:
        """sum / length: the answer-only score."""
        return self.score(0)


@dataclass(frozen=True)
class _Live:
    tokens: tuple[int, ...]
    logprob: float
    met: bool
    row: int  # its row in the model's current rows


def _progress(tokens: tuple[int, ...], sequences: Sequence[tuple[int, ...]]) -> tuple[bool, int]:
    """(constraint met by the last tokens, longest prefix of a sequence that the tokens end with)."""
    best = 0
    for sequence in sequences:
        n = len(sequence)
        if len(tokens) >= n and tokens[-n:] == sequence:
            return True, n
        for k in range(min(n - 1, len(tokens)), best, -1):
            if tokens[-k:] == sequence[:k]:
                best = k
                break
    return False, best


def _forced(tokens: tuple[int, ...], sequences: Sequence[tuple[int, ...]]) -> set[int]:
    """Tokens that start a constraint sequence or continue one the hypothesis ends with."""
    forced = {s[0] for s in sequences}
    for sequence in sequences:
        for k in range(1, min(len(sequence), len(tokens) + 1)):
            if tokens[-k:] == sequence[:k]:
                forced.add(sequence[k])
    return forced


def constrained_beam_search(
    model: NextTokenModel,
    sequences: Sequence[Sequence[int]],
    *,
    beam_size: int,
    max_new_tokens: int,
    eos_ids: Sequence[int],
    prompt_length: int = 0,
) -> list[ConstrainedHypothesis]:
    """Finished hypotheses containing one of ``sequences``, best first by sum / (P + length)
    with P = ``prompt_length`` (see the module doc); empty when none meets the constraint
    within ``max_new_tokens``."""
    targets = [tuple(int(t) for t in s) for s in sequences if len(s) > 0]
    if not targets:
        raise ValueError("constrained beam search needs at least one non-empty constraint sequence")
    if beam_size < 1 or max_new_tokens < 1 or prompt_length < 0:
        raise ValueError("beam_size and max_new_tokens must be >= 1, prompt_length >= 0")
    eos = {int(t) for t in eos_ids}
    finished: list[ConstrainedHypothesis] = []
    live = [_Live((), 0.0, False, 0)]
    logprobs = model.start()
    for step in range(max_new_tokens):
        last_step = step == max_new_tokens - 1
        banks: dict[int, list[tuple[float, tuple[int, ...], bool, int, int]]] = {}
        seen: set[tuple[int, ...]] = set()
        for hyp in live:
            row = logprobs[hyp.row]
            proposals = set(np.argsort(-row, kind="stable")[:beam_size].tolist())
            if not hyp.met:
                proposals |= _forced(hyp.tokens, targets)
            for token in proposals:
                value = float(row[token])
                if not math.isfinite(value):
                    continue
                total = hyp.logprob + value
                if token in eos:
                    if hyp.met:
                        finished.append(ConstrainedHypothesis(hyp.tokens, total, len(hyp.tokens), "eos"))
                    continue
                tokens = (*hyp.tokens, int(token))
                if tokens in seen:
                    continue
                seen.add(tokens)
                met, progress = (True, 0) if hyp.met else _progress(tokens, targets)
                if last_step:
                    if met:
                        finished.append(ConstrainedHypothesis(tokens, total, len(tokens), "length"))
                    continue
                level = max(len(t) for t in targets) + 1 if met else progress
                banks.setdefault(level, []).append((total, tokens, met, hyp.row, int(token)))
        if last_step or not banks:
            break
        for bank in banks.values():
            bank.sort(key=lambda c: -c[0])
        chosen: list[tuple[float, tuple[int, ...], bool, int, int]] = []
        levels = sorted(banks, reverse=True)
        depth = 0
        while len(chosen) < beam_size and any(depth < len(banks[lv]) for lv in levels):
            for level in levels:
                if depth < len(banks[level]) and len(chosen) < beam_size:
                    chosen.append(banks[level][depth])
            depth += 1
        logprobs = model.advance([c[3] for c in chosen], [c[4] for c in chosen])
        live = [_Live(c[1], c[0], c[2], i) for i, c in enumerate(chosen)]
    finished.sort(key=lambda h: -h.score(prompt_length))
    return finished[:beam_size]
