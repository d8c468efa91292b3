"""Aligning a claim to the words of the response it came from, through a character mask.

A claim's words are matched to the words of a sentence: in order first (the word after the
previous match), then anywhere in the sentence (claims reorder words: "born in 1828" from
"who was born in 1828"), case-insensitively, each sentence word used once. The matched
words' character spans are the claim's mask in the response; a token belongs to the claim
when its text overlaps the mask (lm-polygraph's alignment rule). A claim without a matched
content word (not a stop word) is unaligned: it has no tokens to score and is counted.

For a claim given without its sentence (FactualBio's facts), the sentence with the most
matched content words is taken (the first on a tie).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from hallulab.text.stopwords import NLTK_ENGLISH_STOPWORDS

WORD = re.compile(r"\w+(?:['’-]\w+)*")

Span = tuple[int, int]


@dataclass(frozen=True)
class Word:
    text: str
    start: int
    end: int

    @property
    def key(self) -> str:
        return self.text.lower().replace("’", "'")


def words(text: str, offset: int = 0) -> list[Word]:
    return [Word(m.group(0), offset + m.start(), offset + m.end()) for m in WORD.finditer(text)]


@dataclass(frozen=True)
class Alignment:
    """The claim's character spans in the response, and the words that found no match."""

    spans: tuple[Span, ...] = ()
    matched_content_words: int = 0
    unmatched_words: tuple[str, ...] = field(default_factory=tuple)

    @property
    def aligned(self) -> bool:
        return self.matched_content_words > 0


def align_to_sentence(claim: str, sentence: Sequence[Word]) -> Alignment:
    """Match the claim's words to one sentence's words (see the module docstring)."""
    used: set[int] = set()
    spans: list[Span] = []
    unmatched: list[str] = []
    content = 0
    cursor = 0
    for word in words(claim):
        position = next(
            (i for i in range(cursor, len(sentence)) if i not in used and sentence[i].key == word.key), None
        )
        if position is None:
            position = next((i for i in range(len(sentence)) if i not in used and sentence[i].key == word.key), None)
        if position is None:
            unmatched.append(word.text)
            continue
        used.add(position)
        cursor = position + 1
        spans.append((sentence[position].start, sentence[position].end))
        content += word.key not in NLTK_ENGLISH_STOPWORDS
    return Alignment(tuple(sorted(spans)), content, tuple(unmatched))


def align_claim(
    claim: str, sentences: Sequence[Sequence[Word]], sentence_index: int | None
) -> tuple[int | None, Alignment]:
    """(sentence index, alignment) for a claim: within its sentence when known, else the best one."""
    if sentence_index is not None:
        return sentence_index, align_to_sentence(claim, sentences[sentence_index])
    best: tuple[int | None, Alignment] = (None, Alignment(unmatched_words=tuple(w.text for w in words(claim))))
    for index, sentence in enumerate(sentences):
        found = align_to_sentence(claim, sentence)
        if found.matched_content_words > best[1].matched_content_words:
            best = (index, found)
    return best


def tokens_in_spans(token_spans: Sequence[Span | None], spans: Sequence[Span]) -> list[int]:
    """Indices of the tokens whose character span overlaps any of ``spans`` (in order)."""
    out = []
    for index, token in enumerate(token_spans):
        if token is None or token[0] == token[1]:
            continue
        if any(token[0] < end and start < token[1] for start, end in spans):
            out.append(index)
    return out
