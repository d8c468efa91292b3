"""SelfCheckGPT with NLI (Manakul et al., 2023, §5.4, Eq. 9-10).

For sentence r_i of the response and sample S_n, the classifier reads the pair of r_i and
S_n and only the entailment and contradiction logits count:

    P(contradict | r_i, S_n) = exp(z_c) / (exp(z_e) + exp(z_c))            (Eq. 9)
    S_NLI(i) = (1/N) * sum_n P(contradict | r_i, S_n)                      (Eq. 10)

Pair order: the paper's text calls S_n the premise, but the released code (selfcheckgpt
0.1.7, which produced Table 2) tokenises ``(sentence, sample)``, i.e. the sentence first.
``pair_order: sentence_first`` (default) follows the code, so the published numbers and
the parity test hold; ``sample_first`` follows the paper's wording.

The label order comes from the model's config (``label2id`` / ``id2label``, matched
case-insensitively), never assumed: ``potsawee/deberta-v3-large-mnli`` has two labels
(entailment, contradiction), ``microsoft/deberta-large-mnli`` three in another order.

Speed: pairs are de-duplicated (a repeated (sample, sentence) pair is scored once),
sorted by length and scored in batches (no per-pair loop, little padding), on the GPU
when present; every pair probability goes through the call cache keyed on the model
identity, so returning to an already-scored model is a cache hit. The expensive output is
the full I x N_max matrix; the number of samples N is applied later (:func:`sentence_scores`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from hallulab.cache import CallCache, cache_key
from hallulab.data.schema import Passage
from hallulab.methods.sample_matrix import sentence_sample_grid, unflatten
from hallulab.nli.inference import pair_logits
from hallulab.packages import local_weights_digest


def label_indices(config: Any) -> tuple[int, int]:
    """(entailment index, contradiction index) from a transformers config."""
    label2id: Mapping[str, int] = getattr(config, "label2id", None) or {}
    if not label2id and getattr(config, "id2label", None):
        label2id = {v: int(k) for k, v in config.id2label.items()}
    lowered = {str(k).lower(): int(v) for k, v in label2id.items()}
    missing = [name for name in ("entailment", "contradiction") if name not in lowered]
    if missing:
        raise ValueError(f"NLI model config has no {missing} label(s); labels: {sorted(lowered)}")
    return lowered["entailment"], lowered["contradiction"]


@dataclass(frozen=True)
class NLIConfig:
    """``conf/nli/*.yaml``."""

    model: str = ""
    name: str = ""
    pair_order: str = "sentence_first"  # or sample_first; see the module docstring
    revision: str | None = None
    device: str = "auto"
    dtype: str = "float32"  # bfloat16: faster on GPUs and on CPUs with AVX512-BF16; scores move ~1e-3
    batch_size: int = 32
    max_length: int = 512


class NLIScorer:
    """P(contradict) for (premise, hypothesis) pairs with any HF sequence-classification NLI model."""

    def __init__(self, config: NLIConfig, cache: CallCache | None = None) -> None:
        self.config = config
        self.cache = cache

    @cached_property
    def _loaded(self) -> tuple[Any, Any, str]:
        torch = importlib.import_module("torch")
        transformers = importlib.import_module("transformers")
        kwargs = {"revision": self.config.revision} if self.config.revision else {}
        device = self.config.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if self.config.model.startswith(("models/", "./", "/")) and not Path(self.config.model).is_dir():
            raise FileNotFoundError(
                f"NLI model folder {self.config.model!r} does not exist; for the offline model run "
                "`dvc repro train_nli` (or pick a hub model: -S nli=deberta_v3_large_mnli)"
            )
        tokenizer = transformers.AutoTokenizer.from_pretrained(self.config.model, **kwargs)
        model = transformers.AutoModelForSequenceClassification.from_pretrained(self.config.model, **kwargs)
        dtype = getattr(torch, self.config.dtype, None)
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"nli.dtype: {self.config.dtype!r} is not a torch dtype (float32, bfloat16, float16)")
        return tokenizer, model.to(device=device, dtype=dtype).eval(), device

    @cached_property
    def identity(self) -> dict[str, Any]:
        """What the cache key holds: hub id + revision, or a local folder's weight hashes
        (a retrained offline model at the same path is a different model)."""
        model = self._loaded[1]
        identity: dict[str, Any] = {
            "model": self.config.model,
            "revision": self.config.revision or getattr(model.config, "_commit_hash", None) or "",
            "weights": local_weights_digest(self.config.model),
            "labels": list(label_indices(model.config)),
            "max_length": self.config.max_length,
        }
        if self.config.dtype != "float32":  # float32 keys stay as they were before the knob existed
            identity["dtype"] = self.config.dtype
        return identity

    def _compute(self, pairs: list[tuple[str, str]]) -> list[float]:
        torch = importlib.import_module("torch")
        tokenizer, model, device = self._loaded
        entail, contra = label_indices(model.config)
        logits = pair_logits(
            tokenizer,
            model,
            [p[0] for p in pairs],
            [p[1] for p in pairs],
            batch_size=self.config.batch_size,
            max_length=self.config.max_length,
            device=device,
        )
        two = torch.stack([logits[:, entail], logits[:, contra]], dim=-1)
        return [float(x) for x in torch.softmax(two, dim=-1)[:, 1]]

    def pair_probs(self, sentences: Sequence[str], samples: Sequence[str], *, progress: bool = False) -> np.ndarray:
        """P(contradict | sentence, sample) per pair, in the configured pair order."""
        if self.config.pair_order == "sentence_first":
            return self.contradiction_probs(sentences, samples, progress=progress)
        if self.config.pair_order == "sample_first":
            return self.contradiction_probs(samples, sentences, progress=progress)
        raise ValueError(f"nli.pair_order: {self.config.pair_order!r} is not sentence_first or sample_first")

    def contradiction_probs(
        self, texts: Sequence[str], text_pairs: Sequence[str], *, progress: bool = False
    ) -> np.ndarray:
        """P(contradict) per (text, text_pair) as the tokenizer pairs them; duplicates scored
        once; cached when a cache is given.

        Distinct pairs are sorted by length over the whole request, so every cache batch
        (committed as it finishes: a killed run resumes) and every model batch pads little.
        """
        pairs = list(zip(texts, text_pairs, strict=True))
        unique = sorted(dict.fromkeys(pairs), key=lambda pair: len(pair[0]) + len(pair[1]))
        if self.cache is None:
            values = dict(zip(unique, self._compute(unique), strict=True))
        else:
            keys = [cache_key("nli.contradiction", self.identity, p, h) for p, h in unique]
            computed = self.cache.map(
                keys,
                unique,
                self._compute,
                batch_size=max(256, self.config.batch_size),
                progress="NLI pairs" if progress else None,
            )
            values = dict(zip(unique, computed, strict=True))
        return np.asarray([values[p] for p in pairs], dtype=np.float64)


def passage_matrices(
    passages: Sequence[Passage], scorer: NLIScorer, *, progress: bool = False
) -> dict[str, np.ndarray]:
    """Every passage's I x N_max matrix, all pairs of all passages in one batched request."""
    sentences, samples = sentence_sample_grid(passages, "SelfCheck-NLI")
    return unflatten(passages, scorer.pair_probs(sentences, samples, progress=progress))


def contradiction_matrix(sentences: Sequence[str], samples: Sequence[str], scorer: NLIScorer) -> np.ndarray:
    """I x N matrix of P(contradict | r_i, S_n)."""
    flat_sentences = [sentence for sentence in sentences for _ in samples]
    flat_samples = [sample for _ in sentences for sample in samples]
    return scorer.pair_probs(flat_sentences, flat_samples).reshape(len(sentences), len(samples))


def sentence_scores(matrix: np.ndarray, num_samples: int | None = None) -> np.ndarray:
    """Eq. 10 with the first N samples (None: all)."""
    columns = matrix if num_samples is None else matrix[:, :num_samples]
    if columns.shape[1] == 0:
        raise ValueError("SelfCheck-NLI needs at least one sample")
    return columns.mean(axis=1)
