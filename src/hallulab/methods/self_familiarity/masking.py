"""Masking the concept in its explanation (Self-Familiarity Eq. 3) and the constraint strings
of the concept inference (Eq. 4, footnote 5).

Case forms of a string: as written, lower case, upper case and capitalised (first letter
upper, the rest lower, Python's ``str.capitalize``), as the released code builds them.

* Masked: the whole concept and each of its words that is not a stop word, in every case
  form, longest first, replaced by the mask "..." where they stand as whole words.
* Constraint: the whole concept in every case form, each with and without a leading space
  (the tokeniser writes a word after a space as a different token sequence).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hallulab.text.stopwords import NLTK_ENGLISH_STOPWORDS

MASK = "..."


def case_forms(text: str) -> list[str]:
    return list(dict.fromkeys([text, text.lower(), text.upper(), text.capitalize()]))


def mask_targets(concept: str) -> list[str]:
    words = [w for w in re.findall(r"[\w'’-]+", concept) if w.lower() not in NLTK_ENGLISH_STOPWORDS]
    targets = {form for part in [concept, *words] for form in case_forms(part) if form.strip()}
    return sorted(targets, key=lambda t: (-len(t), t))


def mask_concept(explanation: str, concept: str, mask: str = MASK) -> tuple[str, int]:
    """The explanation with the concept's words masked, and how many spans were masked."""
    masked, count = explanation, 0
    for target in mask_targets(concept):
        pattern = re.compile(rf"(?<![\w]){re.escape(target)}(?![\w])")
        masked, n = pattern.subn(mask, masked)
        count += n
    return masked, count


def constraint_strings(concept: str) -> list[str]:
    forms = case_forms(concept.strip())
    return list(dict.fromkeys([*forms, *(" " + f for f in forms)]))


def concept_texts(records: Iterable[Iterable[str]]) -> list[str]:
    """Distinct concept strings in first-seen order."""
    return list(dict.fromkeys(text for texts in records for text in texts))
