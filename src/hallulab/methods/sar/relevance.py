"""The texts whose similarity is a token's relevance (Duan et al., 2024, §4, token-level
shifting): R_T(z_i) = 1 - g(x ∪ z, x ∪ z without z_i), as lm-polygraph 0.7.0's
``CrossEncoderSimilarityMatrixCalculator`` forms them.

lm-polygraph pairs ``input + " " + decode(tokens)`` with ``input + " " + decode(tokens without
token i)``, for each token i. hallulab's text is the record's prompt (when it has one), a space,
then the text itself, and token i is removed by its characters: its span runs from its offset to
the next token's (the last to the end of the text), so the text without it is the text with that
span cut out, what decoding the other tokens gives. A text of one token has no text without it:
lm-polygraph gives its token the similarity 0.5 (its relevance is then the whole weight, whatever
the value), and so does hallulab. A token whose span is empty (a fragment of a character another
token ends, an end-of-text token) changes nothing in the text: similarity 1, relevance 0, as
lm-polygraph gives special tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

from hallulab.core.token_stats import TokenStats

#: lm-polygraph's similarity of the only token of a one-token text
ONE_TOKEN_SIMILARITY = 0.5
#: the similarity of a token that takes no character of the text (relevance 0)
EMPTY_SPAN_SIMILARITY = 1.0


def token_spans(text: str, tokens: Sequence[TokenStats]) -> list[tuple[int, int]]:
    """Each token's character span in ``text``: from its offset to the next token's offset
    (the last token's to the end). Tokens without offsets take their texts' lengths in turn,
    when those texts make up ``text``; a ValueError otherwise."""
    starts: list[int] = []
    if any(token.offset is None for token in tokens):
        if "".join(token.token for token in tokens) != text:
            raise ValueError("tokens without character offsets whose texts do not make up the text")
        at = 0
        for token in tokens:
            starts.append(at)
            at += len(token.token)
    else:
        starts = [int(token.offset) for token in tokens if token.offset is not None]
    ends = [*starts[1:], len(text)]
    if any(start > end for start, end in zip(starts, ends, strict=True)) or (starts and ends[-1] < starts[-1]):
        raise ValueError(f"token offsets {starts} are not in order within a text of {len(text)} characters")
    return list(zip(starts, ends, strict=True))


def with_context(context: str | None, text: str) -> str:
    """lm-polygraph's ``input + " " + text``; the text alone for a record without a prompt."""
    return f"{context} {text}" if context else text


def relevance_pairs(context: str | None, text: str, tokens: Sequence[TokenStats]) -> list[tuple[str, str] | float]:
    """Per token, the pair (x ∪ z, x ∪ z without the token) whose similarity the model gives,
    or the similarity itself where no model is asked (a one-token text, an empty span)."""
    if len(tokens) == 1:
        return [ONE_TOKEN_SIMILARITY]
    full = with_context(context, text)
    out: list[tuple[str, str] | float] = []
    for start, end in token_spans(text, tokens):
        if start == end:
            out.append(EMPTY_SPAN_SIMILARITY)
        else:
            out.append((full, with_context(context, text[:start] + text[end:])))
    return out
