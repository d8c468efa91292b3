"""Concept grouping, filtering and ranking (Self-Familiarity §3.1, §3.3.1; pure functions).

* Word ranks (``word_rank``): ``released``, as the released code (soap117/Self-evaluation,
  ``run_exp_self_familiarity.py``) fills its rarity table in list order: p = the word's
  1-based position, a word listed twice keeping its later position, the concept's words
  split at spaces and looked up as written; a capitalised word or one outside the list gets
  the number of distinct words (§3.3.1). ``first_listing`` (this project's earlier reading):
  the 0-based first position, words by a word pattern, a lower-case form looked up too, the
  list's length for the others.
* Frequency score (Eq. 6): ln f_i = -sum_j p_ij / H over the concept's words (kept as a
  logarithm: a rare word makes f_i underflow to 0 in floating point).
* Grouping: concepts sorted by position; a concept is fused with the next when the two,
  joined by a space or a hyphen, occur in the prompt; then a concept contained in
  another (case-insensitive) is dropped.
* Filtering (``common_filter``): ``whole_string`` (the released code) drops a concept only
  when the whole concept is one common word (not capitalised, first listed among the first
  ``common_words`` entries of the list), so "ink wash painting" stays even though each of its
  words is common; ``every_word`` (a labelled variant, this project's earlier reading of
  §3.1) drops a concept whose every word is common.
* Ranking: ascending ln f_i (rarest first), ties in prompt order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hallulab.artifacts.concepts import Concept
from hallulab.artifacts.concepts.knobs import COMMON_FILTERS, WORD_RANKS
from hallulab.core.config import ConfigError

_WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")


@dataclass(frozen=True)
class WordRanks:
    """A frequency list: each word's first and last 0-based position, the list's length and
    the reading of p (``released`` or ``first_listing``, see the module doc)."""

    first: Mapping[str, int]
    last: Mapping[str, int]
    length: int
    reading: str = "released"

    @classmethod
    def from_words(cls, words: Sequence[str], reading: str = "released") -> WordRanks:
        if reading not in WORD_RANKS:
            raise ConfigError(f"concepts.word_rank: {reading!r} is not one of {list(WORD_RANKS)}")
        first: dict[str, int] = {}
        last: dict[str, int] = {}
        for index, word in enumerate(words):
            first.setdefault(word, index)
            last[word] = index
        return cls(first, last, len(words), reading)

    @property
    def size(self) -> int:
        """p of a capitalised or unlisted word."""
        return len(self.last) if self.reading == "released" else self.length

    def rank(self, word: str) -> int:
        """p of Eq. 6."""
        if self.reading == "released":
            return self.size if word[:1].isupper() or word not in self.last else self.last[word] + 1
        return self.common_rank(word)

    def common_rank(self, word: str) -> int:
        """0-based first position (a lower-case form looked up too; a capitalised word never
        listed): what the common-word filter compares with ``common_words``."""
        if word[:1].isupper():
            return self.length
        return self.first.get(word, self.first.get(word.lower(), self.length))

    def words(self, text: str) -> tuple[str, ...]:
        """The words of a concept whose ranks Eq. 6 multiplies."""
        return tuple(text.split(" ")) if self.reading == "released" else words_of(text)


def words_of(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text))


def log_frequency(words: Sequence[str], ranks: WordRanks, h: float) -> float:
    """ln f_i of Eq. 6."""
    return -sum(ranks.rank(w) for w in words) / h


def is_common(words: Sequence[str], ranks: WordRanks, common_words: int, how: str = "whole_string") -> bool:
    """Whether a concept (given as its words) is common and so filtered out."""
    if how == "whole_string":
        return len(words) == 1 and ranks.common_rank(words[0]) < common_words
    if how == "every_word":
        return bool(words) and all(ranks.common_rank(w) < common_words for w in words)
    raise ConfigError(f"concepts.common_filter: {how!r} is not one of {list(COMMON_FILTERS)}")


def locate(prompt: str, texts: Sequence[str]) -> list[tuple[str, int]]:
    """(text, position) of distinct concepts (case-insensitive); a concept not found in the
    prompt is placed after it, in extraction order."""
    lowered = prompt.lower()
    seen: set[str] = set()
    out: list[tuple[str, int]] = []
    for k, text in enumerate(texts):
        text = text.strip().strip(".,;:!?\"'").strip()
        key = text.lower()
        if not text or key in seen:
            continue
        seen.add(key)
        found = lowered.find(key)
        out.append((text, found if found >= 0 else len(prompt) + k))
    return out


def group(prompt: str, located: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    """Fuse adjacent concepts that occur joined in the prompt; drop covered concepts."""
    ordered = sorted(located, key=lambda c: c[1])
    lowered = prompt.lower()
    fused: list[tuple[str, int]] = []
    for text, position in ordered:
        if fused:
            last, start = fused[-1]
            for joiner in (" ", "-"):
                candidate = f"{last}{joiner}{text}"
                if start < len(prompt) and lowered.find(candidate.lower(), start) == start:
                    fused[-1] = (prompt[start : start + len(candidate)], start)
                    break
            else:
                fused.append((text, position))
            continue
        fused.append((text, position))
    keys = [t.lower() for t, _ in fused]
    return [
        (t, p)
        for i, (t, p) in enumerate(fused)
        if not any(keys[i] in keys[j] and i != j and keys[i] != keys[j] for j in range(len(keys)))
    ]


def process(
    prompt: str,
    extracted: Sequence[str],
    ranks: WordRanks,
    *,
    common_words: int,
    h: float,
    common_filter: str = "whole_string",
    grouping: bool = True,
    filtering: bool = True,
    ranking: bool = True,
) -> tuple[list[Concept], bool]:
    """The concepts after the chosen steps, most important first, and whether filtering
    removed every concept (then the unfiltered concepts are kept)."""
    located = locate(prompt, extracted)
    located = group(prompt, located) if grouping else sorted(located, key=lambda c: c[1])
    concepts = [Concept(t, p, log_frequency(ranks.words(t), ranks, h), words_of(t)) for t, p in located]
    all_common = False
    if filtering:
        kept = [c for c in concepts if not is_common(c.words, ranks, common_words, common_filter)]
        all_common = bool(concepts) and not kept
        concepts = kept or concepts
    if ranking:
        concepts = sorted(concepts, key=lambda c: (c.log_frequency, c.position))
    return concepts, all_common
