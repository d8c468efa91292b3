"""SQuAD-style answer normalisation and gold-answer containment (no model imports: the cheap
HalluCheck aggregate step uses it too)."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in string.punctuation)
    return " ".join(_ARTICLES.sub(" ", text).split())


def contains_gold_answer(answer: str, gold_answers: Sequence[str]) -> bool:
    """Normalised containment: some gold answer, normalised, occurs in the normalised answer
    (how an answer the pipeline writes for a SAC3 question is labelled correct)."""
    normalized = f" {normalize_answer(answer)} "
    return any(f" {normalize_answer(g)} " in normalized for g in gold_answers if normalize_answer(g))
