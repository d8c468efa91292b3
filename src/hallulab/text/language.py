"""A cheap check that a record is English, before it meets the English spaCy model.

The sentence splitter, the tokenizer and the NER tagger are English models
(``en_core_web_sm``); on other languages they run without complaint and give poor
sentences, tokens and entities. Two signals, both needed: English prose is dense in a few
function words ("the", "of", "was", "which" ...) that other languages' prose seldom uses, and
most of its words are common English words (wordfreq's list, Zipf frequency above 3, about
once per million words). A record with at least :data:`MIN_WORDS` words, fewer than
:data:`FUNCTION_SHARE_FLOOR` of them function words and fewer than :data:`COMMON_SHARE_FLOOR`
of them common English words is reported as probably not English (a short English answer
repeated, "James Brown wrote Papa's Got a Brand New Bag", fails the first test, not the
second). The check warns, it does not refuse.

Scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Khmer, Burmese)
have no whitespace-separated words to count: each of their characters counts as one word
(:data:`UNSPACED_SCRIPTS`), so such a text is judged by the same rule, on its characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from wordfreq import zipf_frequency

#: the letters of scripts written without spaces between words (Thai, Lao, Burmese, Khmer,
#: the Japanese kana, the CJK ideographs and their extensions)
UNSPACED_SCRIPTS = (
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
#: a word: one character of an unspaced script, or a run of other letters
_WORD = re.compile(f"[{UNSPACED_SCRIPTS}]|[^\\W\\d_{UNSPACED_SCRIPTS}]+", re.UNICODE)
#: English function words that are not also common words of French, German, Spanish,
#: Italian or Portuguese ("a", "in", "die", "so" ... are left out on purpose).
# fmt: off
ENGLISH_FUNCTION_WORDS = frozenset({
    "the", "of", "and", "to", "is", "was", "for", "on", "with", "as", "by", "that", "he", "she",
    "it", "his", "her", "they", "are", "were", "from", "at", "this", "which", "be", "has", "had",
    "have", "not", "an", "or", "but", "who", "also", "their", "its", "been", "would", "will",
    "there", "what", "when", "one", "into",
})
# fmt: on
MIN_WORDS = 20
FUNCTION_SHARE_FLOOR = 0.05
COMMON_SHARE_FLOOR = 0.7


def common_english_share(text: str) -> float:
    """Share of the text's words that are common English words (Zipf frequency above 3)."""
    words = _WORD.findall(text.lower())
    return sum(zipf_frequency(w, "en") > 3.0 for w in words) / len(words) if words else 0.0


def function_word_share(text: str) -> tuple[float, int]:
    """(share of the text's words that are English function words, number of words)."""
    words = _WORD.findall(text.lower())
    if not words:
        return 0.0, 0
    return sum(w in ENGLISH_FUNCTION_WORDS for w in words) / len(words), len(words)


def probably_not_english(texts: Iterable[tuple[str, str]]) -> list[str]:
    """The ids of ``(id, text)`` pairs whose text is long enough to judge and probably not English."""
    flagged = []
    for record_id, text in texts:
        share, words = function_word_share(text)
        if words >= MIN_WORDS and share < FUNCTION_SHARE_FLOOR and common_english_share(text) < COMMON_SHARE_FLOOR:
            flagged.append(record_id)
    return flagged
