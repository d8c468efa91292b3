"""The three tagging schemes over spaCy tokens (pure functions of a parsed sentence)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from hallulab.artifacts.atomic_facts import FACT_TAGS


@dataclass(frozen=True)
class TaggedToken:
    """What the schemes need of a spaCy token (absolute character offsets in the response)."""

    text: str
    tag: str
    start: int
    end: int
    is_punct: bool
    is_space: bool


Span = tuple[int, int]


def pos_spans(tokens: Sequence[TaggedToken]) -> list[Span]:
    """Maximal runs of NNP / NNPS / CD / RB tokens; one IN or punctuation token between two
    such tokens joins them."""
    spans: list[Span] = []
    i = 0
    while i < len(tokens):
        if tokens[i].tag not in FACT_TAGS:
            i += 1
            continue
        start, end, j = tokens[i].start, tokens[i].end, i + 1
        while j < len(tokens):
            if tokens[j].tag in FACT_TAGS:
                end, j = tokens[j].end, j + 1
                continue
            joiner = tokens[j].tag == "IN" or tokens[j].is_punct
            if joiner and j + 1 < len(tokens) and tokens[j + 1].tag in FACT_TAGS:
                end, j = tokens[j + 1].end, j + 2
                continue
            break
        spans.append((start, end))
        i = j
    return spans


def random_spans(tokens: Sequence[TaggedToken], count: int, seed: str) -> list[Span]:
    """``count`` distinct content tokens, drawn with a seeded generator, in text order."""
    pool = [t for t in tokens if not t.is_punct and not t.is_space]
    chosen = random.Random(seed).sample(pool, min(count, len(pool)))
    return sorted((t.start, t.end) for t in chosen)
