"""Masking the concept in its explanation (Self-Familiarity Eq. 3) and the constraint strings
of the concept inference (Eq. 4, footnote 5).

Case forms of a string: as written, lower case, upper case and capitalised. The masked
strings are capitalised as a whole (first letter upper, the rest lower, ``str.capitalize``);
the constraint strings per word ("Ink Wash Painting"), as the released code builds each.

* Masked: the whole concept and each of its words that is not a stop word, in every case
  form, longest first, replaced by the mask "..." wherever they occur, inside longer words
  too (``masking: substring``, the released code's ``str.replace``, so "derivative's" and
  "paintings" lose their concept); ``masking: whole_word`` replaces only where a target
  stands as a whole word (a labelled variant: inflected forms then leak into the masked
  explanation).
* Constraint: the whole concept in every case form, each with and without a leading space
  (the tokeniser writes a word after a space as a different token sequence).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hallulab.core.config import ConfigError
from hallulab.text.stopwords import NLTK_ENGLISH_STOPWORDS

MASK = "..."


MASKINGS = ("substring", "whole_word")


def case_forms(text: str) -> list[str]:
    """As written, lower, upper, capitalised as a whole (the masked strings' forms)."""
    return list(dict.fromkeys([text, text.lower(), text.upper(), text.capitalize()]))


def title_words(text: str) -> str:
    """Every space-separated word with its first letter upper and the rest lower."""
    return " ".join(word[:1].upper() + word[1:].lower() for word in text.split(" "))


def constraint_forms(text: str) -> list[str]:
    """As written, lower, upper, per-word title case (the constraint strings' forms)."""
    return list(dict.fromkeys([text, text.lower(), text.upper(), title_words(text)]))


def mask_targets(concept: str) -> list[str]:
    words = [w for w in re.findall(r"[\w'’-]+", concept) if w.lower() not in NLTK_ENGLISH_STOPWORDS]
    targets = {form for part in [concept, *words] for form in case_forms(part) if form.strip()}
    return sorted(targets, key=lambda t: (-len(t), t))


def mask_concept(explanation: str, concept: str, mask: str = MASK, masking: str = "substring") -> tuple[str, int]:
    """The explanation with the concept's words masked, and how many spans were masked."""
    if masking not in MASKINGS:
        raise ConfigError(f"self_familiarity.score.masking: {masking!r} is not one of {list(MASKINGS)}")
    masked, count = explanation, 0
    for target in mask_targets(concept):
        escaped = re.escape(target)
        pattern = re.compile(escaped if masking == "substring" else rf"(?<![\w]){escaped}(?![\w])")
        masked, n = pattern.subn(mask, masked)
        count += n
    return masked, count


def constraint_strings(concept: str) -> list[str]:
    forms = constraint_forms(concept.strip())
    return list(dict.fromkeys([*forms, *(" " + f for f in forms)]))


def concept_texts(records: Iterable[Iterable[str]]) -> list[str]:
    """Distinct concept strings in first-seen order."""
    return list(dict.fromkeys(text for texts in records for text in texts))
