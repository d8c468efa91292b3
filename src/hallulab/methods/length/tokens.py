"""The token count of :mod:`hallulab.methods.length`: the matches of ``\\w+|[^\\w\\s]``."""

from __future__ import annotations

import re

#: a maximal run of word characters (Unicode letters, digits, underscore), or any one other
#: character that is not white space (a punctuation mark, a symbol)
TOKEN = re.compile(r"\w+|[^\w\s]")


def tokens(text: str) -> list[str]:
    """The tokens of ``text``, in order (``"Born in 1867."`` -> ``Born``, ``in``, ``1867``, ``.``)."""
    return TOKEN.findall(text)


def token_count(text: str) -> int:
    """``len(tokens(text))``: 0 for an empty or all-space text."""
    return sum(1 for _ in TOKEN.finditer(text))
