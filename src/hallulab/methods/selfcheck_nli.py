"""SelfCheckGPT with NLI (Manakul et al., 2023, §5.4, Eq. 9-10).

For sentence r_i of the response and sample S_n, the classifier reads the pair
(premise = S_n, hypothesis = r_i) and only the entailment and contradiction logits count:

    P(contradict | r_i, S_n) = exp(z_c) / (exp(z_e) + exp(z_c))            (Eq. 9)
    S_NLI(i) = (1/N) * sum_n P(contradict | r_i, S_n)                      (Eq. 10)

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
from typing import Any

import numpy as np

from hallulab.cache import CallCache, cache_key


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
    revision: str | None = None
    device: str = "auto"
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
        tokenizer = transformers.AutoTokenizer.from_pretrained(self.config.model, **kwargs)
        model = transformers.AutoModelForSequenceClassification.from_pretrained(self.config.model, **kwargs)
        return tokenizer, model.to(device).eval(), device

    @cached_property
    def identity(self) -> dict[str, Any]:
        model = self._loaded[1]
        return {
            "model": self.config.model,
            "revision": self.config.revision or getattr(model.config, "_commit_hash", None) or "",
            "labels": list(label_indices(model.config)),
            "max_length": self.config.max_length,
        }

    def _compute(self, pairs: list[tuple[str, str]]) -> list[float]:
        torch = importlib.import_module("torch")
        tokenizer, model, device = self._loaded
        entail, contra = label_indices(model.config)
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        out = np.empty(len(pairs), dtype=np.float64)
        for start in range(0, len(order), self.config.batch_size):
            chunk = order[start : start + self.config.batch_size]
            encoded = tokenizer(
                [pairs[i][0] for i in chunk],
                [pairs[i][1] for i in chunk],
                truncation=True,
                max_length=self.config.max_length,
                padding=True,
                return_tensors="pt",
            ).to(device)
            with torch.inference_mode():
                logits = model(**encoded).logits.float()
            two = torch.stack([logits[:, entail], logits[:, contra]], dim=-1)
            out[chunk] = torch.softmax(two, dim=-1)[:, 1].cpu().numpy()
        return out.tolist()

    def contradiction_probs(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        """P(contradict) per pair; duplicates scored once; cached when a cache is given."""
        pairs = list(zip(premises, hypotheses, strict=True))
        if self.cache is None:
            unique = list(dict.fromkeys(pairs))
            values = dict(zip(unique, self._compute(unique), strict=True))
            return np.asarray([values[p] for p in pairs])
        keys = [cache_key("nli.contradiction", self.identity, p, h) for p, h in pairs]
        return np.asarray(self.cache.map(keys, pairs, self._compute, batch_size=256))


def contradiction_matrix(sentences: Sequence[str], samples: Sequence[str], scorer: NLIScorer) -> np.ndarray:
    """I x N matrix of P(contradict | r_i, S_n) (premise = sample, hypothesis = sentence)."""
    premises = [sample for _ in sentences for sample in samples]
    hypotheses = [sentence for sentence in sentences for _ in samples]
    return scorer.contradiction_probs(premises, hypotheses).reshape(len(sentences), len(samples))


def sentence_scores(matrix: np.ndarray, num_samples: int | None = None) -> np.ndarray:
    """Eq. 10 with the first N samples (None: all)."""
    columns = matrix if num_samples is None else matrix[:, :num_samples]
    if columns.shape[1] == 0:
        raise ValueError("SelfCheck-NLI needs at least one sample")
    return columns.mean(axis=1)
