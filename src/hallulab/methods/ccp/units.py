"""The words of a claim on the response's tokens, and the NLI texts CCP compares.

A token's character span in the response runs from its offset to the next token's offset.
A claim's tokens are those whose span overlaps the claim's character mask (the claims
artifact). With ``word_merge`` (the paper's words), a token that continues a word (no
leading space, glued to a letter or digit before it) joins the previous token's word; the
word is judged once, at its first token, whose top-K alternatives are the word's
alternatives, and its continuation tokens add no uncertainty. Without it (lm-polygraph's
released code), every token is its own word.

NLI contexts (Table 11): ``no_context`` compares the two words alone (stripped of spaces and
punctuation, as lm-polygraph does); ``claim_prefix`` compares the claim's words up to the
current one with the same prefix ending in the alternative (the paper's standard variant,
lm-polygraph's ``fact_pref``); ``sentence_prefix`` does the same with the whole sentence
before the word.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass

from hallulab.artifacts.claims.alignment import Span, tokens_in_spans
from hallulab.core.config import ConfigError
from hallulab.core.token_stats import TokenStats, same_token
from hallulab.methods.ccp.knobs import CONTEXTS

CONTEXT_NAMES = {"no_context": "nocontext", "claim_prefix": "claimpref", "sentence_prefix": "sentpref"}
_STRIP = string.punctuation + " \n"


def token_spans(tokens: Sequence[TokenStats], response: str) -> list[Span | None]:
    """Character span of every token in the response (None when the offset is unknown)."""
    spans: list[Span | None] = []
    for i, token in enumerate(tokens):
        if token.offset is None:
            spans.append(None)
            continue
        following = next((t.offset for t in tokens[i + 1 :] if t.offset is not None), len(response))
        spans.append((token.offset, max(token.offset, min(following, len(response)))))
    return spans


def starts_word(index: int, tokens: Sequence[TokenStats], response: str) -> bool:
    token = tokens[index]
    if index == 0 or token.offset is None or not token.token or not token.token[0].isalnum():
        return True
    before = response[token.offset - 1] if token.offset > 0 else " "
    return not before.isalnum()


@dataclass(frozen=True)
class ClaimWord:
    """One judged unit of a claim: its tokens (the first carries the alternatives) and text."""

    tokens: tuple[int, ...]
    text: str

    @property
    def head(self) -> int:
        return self.tokens[0]


def claim_words(
    claim_spans: Sequence[Span], tokens: Sequence[TokenStats], response: str, *, word_merge: bool
) -> list[ClaimWord]:
    spans = token_spans(tokens, response)
    indices = tokens_in_spans(spans, claim_spans)
    groups: list[list[int]] = []
    for index in indices:
        glued = word_merge and groups and groups[-1][-1] == index - 1 and not starts_word(index, tokens, response)
        if glued:
            groups[-1].append(index)
        else:
            groups.append([index])
    words = []
    for group in groups:
        first, last = spans[group[0]], spans[group[-1]]
        text = response[first[0] : last[1]] if first and last else "".join(tokens[i].token for i in group)
        words.append(ClaimWord(tuple(group), text))
    return words


def strip_word(text: str) -> str:
    return text.strip(_STRIP)


def alternatives(token: TokenStats, k: int) -> list[tuple[str, float]]:
    """The K options CCP compares at a position (Eq. 3-4; Figure 7's K counts them all): the
    written token first, then the most probable other tokens of its top list, K in all.

    A generated (greedy) token is always inside its own top-K, so the options are exactly the
    top-K list with the written token moved to the front, as lm-polygraph's
    ``GreedyProbsCalculator`` builds ``greedy_tokens_alternatives``; K = 1 leaves the written
    token alone and CCP_word = 1. A teacher-forced token can fall outside its top-K: it is
    still the first option, with its own probability (CCP is about the written word), and
    takes the place of the K-th most probable token (:func:`outside_top_k` counts such words);
    lm-polygraph has no teacher-forced path to compare with.

    The written token is found in its top list by vocabulary id, as lm-polygraph compares ids
    (:func:`hallulab.core.token_stats.same_token`); only where the backend gives no ids, by its text. A
    text match would drop every alternative that decodes like the written token: two
    fragments of multi-byte characters, different ids with one replacement-character text,
    are different tokens."""
    if k < 1:
        raise ValueError(f"K = {k}: CCP needs at least the written token (K >= 1)")
    others = [option for i, option in enumerate(token.top) if not same_token(token, i)][: k - 1]
    return [(token.token, token.logprob), *others]


def outside_top_k(token: TokenStats, k: int) -> bool:
    """Whether the written token is not among the K most probable tokens of its position (by
    id where known, as :func:`alternatives` finds it)."""
    return not any(same_token(token, i) for i in range(min(k, len(token.top))))


def nli_pairs(
    context: str,
    word: ClaimWord,
    previous: Sequence[ClaimWord],
    greedy_text: str,
    alternative: str,
    sentence_before: str,
) -> tuple[str, str]:
    """(greedy text, alternative text) as the NLI model reads them in ``context``."""
    if context == "no_context":
        return strip_word(greedy_text), strip_word(alternative)
    if context == "claim_prefix":
        prefix = "".join(w.text for w in previous)
        return prefix + greedy_text, prefix + alternative
    if context == "sentence_prefix":
        return sentence_before + greedy_text, sentence_before + alternative
    raise ConfigError(f"ccp.nli_contexts: {context!r} is not one of {list(CONTEXTS)}")
