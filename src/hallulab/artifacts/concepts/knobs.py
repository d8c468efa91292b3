"""The ``concepts`` artifact's knob class and the choices it names, kept apart from the code
that builds the artifact so that declaring it imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.artifacts.concepts import SOURCES
from hallulab.core.config import setting

WORD_LISTS = ("auto", "file", "wordfreq")
COMMON_FILTERS = ("whole_string", "every_word")
WORD_RANKS = ("released", "first_listing")


@dataclass(frozen=True)
class ConceptsKnobs:
    """params ``concepts``."""

    source: str = setting(
        "auto",
        choices=SOURCES,
        doc="auto: meta.concepts when the data gives them (a list of strings), else spacy; given; "
        "llm (llms.extractor, Figure 6); spacy",
    )
    prompt: str = "sf_concept_extraction"
    word_list: str = setting("auto", choices=WORD_LISTS, doc="auto: the file when at hand, else wordfreq")
    word_list_file: str = setting(
        "concept7_self_familiarity/wiki-100k.txt",
        doc="the Wiktionary top-100k word list the paper uses, under $HALLULAB_DATA_ROOT",
    )
    word_list_size: int = setting(100000, minimum=1, doc="entries read from the list")
    common_words: int = setting(10000, minimum=0, doc="the top-N words that are common (Appendix D: 10,000)")
    common_filter: str = setting(
        "whole_string", choices=COMMON_FILTERS, doc="whole_string: the released code; every_word: a labelled variant"
    )
    frequency_h: float = setting(100, above=0.0, doc="H of Eq. 6 (Appendix D: 100)")
    word_rank: str = setting(
        "released",
        choices=WORD_RANKS,
        doc="p of Eq. 6: released = 1-based, a word's last listing, words split at spaces; "
        "first_listing = 0-based first listing (this project's earlier reading)",
    )
    max_new_tokens: int = setting(64, minimum=1, doc="reply length of the LLM extractor")
