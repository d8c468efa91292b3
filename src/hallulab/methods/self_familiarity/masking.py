"""Masking the concept (Self-Familiarity Eq. 3) and the constraint strings of the concept
inference (Eq. 4, footnote 5).

Case forms of a string: as written, lower case, upper case and capitalised. The masked
strings are capitalised as a whole (first letter upper, the rest lower, ``str.capitalize``);
the constraint strings per word ("Ink Wash Painting"), as the released code builds each.

* ``masking: released`` (the headline), as the released code (soap117/Self-evaluation,
  ``run_exp_self_familiarity.py``) masks: the targets are the concept's tokens by NLTK's
  ``word_tokenize`` and the concept itself, no stop word left out (the stop-word list the
  code filters with is the stop-token list ``['</s>']`` by then), each in every case form,
  longest first, replaced by the mask "..." wherever it occurs, inside longer words too
  (``str.replace``); the replacement runs over the whole wrapped prompt (the wrapper, the
  inference prompt and the explanation: :mod:`~hallulab.methods.self_familiarity.inference`),
  and the explanation keeps its newlines (only a trailing "User " and one trailing newline
  are cut, :func:`released_explanation`). A one-letter word such as "a" is masked in
  "related" and "ASSISTANT" too. NLTK's sentence splitter (``punkt``) is not run before the
  word tokenizer: a concept is one phrase.
* ``masking: substring``: this project's earlier reading: the concept and each of its words
  that is not an NLTK English stop word, masked in the explanation alone (newlines made
  spaces); ``whole_word``: the same, replaced only where a target stands as a whole word
  (inflected forms then leak into the masked explanation).
* Constraint: the whole concept in every case form, each with and without a leading space
  (the tokeniser writes a word after a space as a different token sequence).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hallulab.core.config import ConfigError
from hallulab.text.stopwords import NLTK_ENGLISH_STOPWORDS

MASK = "..."


MASKINGS = ("released", "substring", "whole_word")
EXPLANATION_MASKINGS = ("substring", "whole_word")
#: The list the released code's concept words are filtered with: its stop tokens.
RELEASED_STOP_WORDS = ("</s>",)


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
    """The explanation with the concept's non-stop words masked (``substring`` or
    ``whole_word``), and how many spans were masked."""
    if masking not in EXPLANATION_MASKINGS:
        raise ConfigError(f"self_familiarity.score.masking: {masking!r} is not one of {list(EXPLANATION_MASKINGS)}")
    masked, count = explanation, 0
    for target in mask_targets(concept):
        escaped = re.escape(target)
        pattern = re.compile(escaped if masking == "substring" else rf"(?<![\w]){escaped}(?![\w])")
        masked, n = pattern.subn(mask, masked)
        count += n
    return masked, count


def released_targets(concept: str) -> list[str]:
    """The concept's tokens (NLTK's word tokenizer) that are not in the released stop list,
    then the concept itself."""
    from nltk.tokenize import word_tokenize

    words = word_tokenize(concept, preserve_line=True)
    return [w for w in words if w.lower() not in RELEASED_STOP_WORDS] + [concept]


def mask_released(text: str, concept: str, mask: str = MASK) -> tuple[str, int]:
    """``text`` with every case form of every released target replaced by the mask, longest
    first (ties alphabetically), one form after the other; and how many spans were replaced."""
    forms = {form for target in released_targets(concept) for form in case_forms(target) if form}
    count = 0
    for form in sorted(forms, key=lambda f: (-len(f), f)):
        count += text.count(form)
        text = text.replace(form, mask)
    return text, count


def released_explanation(text: str) -> str:
    """The explanation as the released code puts it in the inference prompt: a trailing
    "User " cut, then one trailing newline; other newlines kept."""
    if text.endswith("User "):
        text = text[: -len("User ")]
    return text.removesuffix("\n")


def constraint_strings(concept: str) -> list[str]:
    forms = constraint_forms(concept.strip())
    return list(dict.fromkeys([*forms, *(" " + f for f in forms)]))


def concept_texts(records: Iterable[Iterable[str]]) -> list[str]:
    """Distinct concept strings in first-seen order."""
    return list(dict.fromkeys(text for texts in records for text in texts))
