"""The NLI layer: any Hugging Face sequence-classification NLI model behind one scorer.

Shared by SelfCheckGPT-NLI (P(contradict | sentence, sample), Eq. 9) and CCP (the NLI
class of word pairs). The label order comes from the model's config, never assumed:
``label2id`` / ``id2label`` matched case-insensitively (``potsawee/deberta-v3-large-mnli``
has two labels, entailment and contradiction; ``microsoft/deberta-large-mnli`` three in
another order). When ``label2id`` holds generic names (``LABEL_0`` ...) but ``id2label``
names the classes, ``id2label`` is used.

Speed: distinct pairs are scored once, sorted by length over the whole request and run in
batches, on the GPU when present; every result goes through the call cache keyed on the
model identity (hub id + revision, or a local folder's weights sha256), so returning to a
model that was already scored is a cache hit and a killed run resumes from the last batch.
Inputs longer than the model can take are truncated at the model's own limit (the smaller
of ``max_length`` and the tokenizer's ``model_max_length`` / the model's position count),
as the reference code's ``truncation=True`` does.

Reduced precision (``dtype: bfloat16``) rounds every probability a little (the benchmark
sections ``nli_bfloat16`` and ``ccp_bfloat16`` record by how much). That is noise for
SelfCheck-NLI's mean P(contradict), but can flip the argmax class CCP reads where two
classes are nearly tied, so class probabilities re-score their near-ties in float32
(``recheck_margin``; a second, float32 copy of the model is then loaded on first use).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from hallulab.core.call_cache import CallCache, cache_key, model_dir
from hallulab.core.config import package_checkout, setting
from hallulab.core.errors import UserFacingError
from hallulab.core.package_files import local_weights_digest
from hallulab.nli.inference import compiled_for_inference, pair_logits
from hallulab.nli.runtimes import RUNTIMES, NLIRuntime, runtime_named

NLI_LABELS = ("entailment", "neutral", "contradiction")


def _label_map(mapping: Mapping[Any, Any] | None, *, names_are_keys: bool) -> dict[str, int]:
    if not mapping:
        return {}
    pairs = mapping.items() if names_are_keys else ((v, k) for k, v in mapping.items())
    return {str(name).lower(): int(index) for name, index in pairs}


def label_indices(config: Any) -> tuple[int, int]:
    """(entailment index, contradiction index) from a transformers config.

    ``label2id`` first; when it does not name both classes (generic ``LABEL_0`` keys),
    ``id2label``. A model whose config names neither is an error, never a guess."""
    candidates = [
        _label_map(getattr(config, "label2id", None), names_are_keys=True),
        _label_map(getattr(config, "id2label", None), names_are_keys=False),
    ]
    for labels in candidates:
        if "entailment" in labels and "contradiction" in labels:
            return labels["entailment"], labels["contradiction"]
    seen = sorted({name for labels in candidates for name in labels})
    raise ValueError(
        f"the NLI model's config names no 'entailment' and 'contradiction' labels (label2id / id2label hold {seen}); "
        "hallulab reads the label order from the config and will not guess it"
    )


def label_order(config: Any) -> dict[str, int]:
    """Every NLI class the config names (entailment, neutral, contradiction) -> its index."""
    entail, contra = label_indices(config)
    found = {"entailment": entail, "contradiction": contra}
    for labels in (
        _label_map(getattr(config, "label2id", None), names_are_keys=True),
        _label_map(getattr(config, "id2label", None), names_are_keys=False),
    ):
        if "neutral" in labels:
            found["neutral"] = labels["neutral"]
            break
    return found


#: Reduced-precision batches are padded to a multiple of this many tokens (see
#: :mod:`hallulab.nli.inference`); float32 batches keep their exact length, so float32 scores
#: stay bit-identical to the call cache's earlier entries.
REDUCED_PRECISION_PAD = 16


class NLIModelNotFoundError(FileNotFoundError, UserFacingError):
    """A local NLI model folder that is in none of the places it is looked for."""


#: the checkout the running package comes from, where the DAG's ``models/`` folders are (None:
#: an installed package, whose install folder holds no model and is not named to a user)
CHECKOUT = package_checkout()
#: the folder ``hallulab nli train`` writes by default, under :func:`hallulab.core.call_cache.model_dir`
#: (:data:`hallulab.nli.recipe.OFFLINE_MODEL`)
TRAINED_MODEL = "nli_minilm"


def model_source(model: str, root: Path | None = CHECKOUT) -> str:
    """What ``from_pretrained`` loads for ``model``: a hub id as it is; a local folder
    (``models/nli_minilm``, ``./x``, an absolute path) where the DAG puts it, the current
    folder first (a stage runs in its workspace), then the checkout ``root`` the package runs
    from (the API or the CLI called from any other folder; None for an installed package), then,
    for ``models/<name>``, the model folder ``hallulab nli train`` writes
    (:func:`hallulab.core.call_cache.model_dir`). A folder found in none is a one-line error
    naming the setting, the command that makes the model there, and the user's own folders
    looked in (never the package's install folder)."""
    if not model.startswith(("models/", "./", "/")):
        return model
    candidates = [Path(model)] if Path(model).is_absolute() or root is None else [Path(model), root / model]
    if model.startswith("models/"):
        candidates.append(model_dir() / model.removeprefix("models/"))
    for candidate in candidates:
        if candidate.is_dir():
            return str(candidate)
    looked = ", ".join(str(c.absolute()) for c in candidates)
    if model == f"models/{TRAINED_MODEL}":
        command = "hallulab nli train"
    elif model.startswith("models/"):
        command = f"hallulab nli train -o {candidates[-1]}"
    else:
        command = f"hallulab nli train -o {model}"
    checkout = " or `make run` in the hallulab checkout" if root is not None and model.startswith("models/") else ""
    raise NLIModelNotFoundError(
        f"NLI model folder {model!r} not found (setting nli.model; looked in {looked}); make the offline model with "
        f"`{command}` (from the pairs shipped with hallulab, minutes on a CPU){checkout}; "
        "or pick a hub model: -S nli=deberta_v3_large_mnli"
    )


def hub_model_error(source: str, error: BaseException) -> NLIModelNotFoundError:
    """A hub model that neither the hub nor its local cache gave: one line naming the model,
    the first line of what transformers said, and the offline choice."""
    said = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
    return NLIModelNotFoundError(
        f"NLI model {source!r} could not be loaded from the Hugging Face hub or its cache ({said}); "
        "offline, use the offline model: -S nli=minilm_offline (`hallulab nli train` makes it)"
    )


def check_model_available(model: str, revision: str | None = None) -> None:
    """Fail now, in one line, when the NLI model cannot be loaded: a local folder found nowhere
    (:func:`model_source`), or a hub id whose config neither the hub nor its cache gives. What a
    caller runs before work that a missing model would waste (the API, before any LLM call)."""
    source = model_source(model)
    if source != model or model.startswith(("models/", "./", "/")):
        return  # a local folder, found
    import transformers

    try:
        transformers.AutoConfig.from_pretrained(source, **({"revision": revision} if revision else {}))
    except OSError as error:
        raise hub_model_error(source, error) from error


@dataclass(frozen=True)
class NLIKnobs:
    """``conf/nli/*.yaml`` (params section ``nli``)."""

    model: str = setting("", doc="hub id or local folder")
    name: str = ""
    pair_order: str = setting("sentence_first", choices=("sentence_first", "sample_first"))
    revision: str | None = None
    device: str = "auto"
    dtype: str = setting("float32", choices=("float32", "bfloat16", "float16"))
    batch_size: int = setting(32, minimum=1)
    max_length: int = setting(512, minimum=8)
    compile: bool = setting(False, doc="torch.compile the model for inference (see compiled_for_inference)")
    recheck_margin: float = setting(
        0.05,
        minimum=0.0,
        maximum=1.0,
        doc="reduced precision, class decisions only (class_probs, not P(contradict)): re-score in float32 "
        "the pairs whose two most probable classes are closer than this",
    )
    depends_on: str = setting("", doc="a file the scoring stages depend on (the offline model's folder)")
    runtime: str = setting(
        "torch",
        choices=tuple(RUNTIMES),
        doc="torch, or openvino_int8: P(contradict) through OpenVINO with NNCF static int8 on the CPU, "
        "class decisions still float32 torch's (hallulab.nli.openvino_runtime)",
    )

    def __post_init__(self) -> None:
        if runtime_named(self.runtime).converts_float32 and (self.dtype != "float32" or self.compile):
            raise ValueError(
                f"nli.runtime={self.runtime} quantises the float32 model itself: "
                "leave nli.dtype=float32 and nli.compile=false"
            )


def model_max_length(tokenizer: Any, model: Any, configured: int) -> int:
    """The longest input the model takes: ``configured`` capped by the tokenizer's
    ``model_max_length`` and the model's position embeddings (minus the offset some
    architectures reserve)."""
    limits = [configured]
    tokenizer_limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(tokenizer_limit, int) and 0 < tokenizer_limit < 1_000_000:
        limits.append(tokenizer_limit)
    positions = getattr(model.config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        offset = 2 if getattr(model.config, "model_type", "") in ("roberta", "xlm-roberta", "camembert") else 0
        limits.append(positions - offset)
    return min(limits)


def near_tie_rows(probs: Any, margin: float) -> list[int]:
    """Rows of an (n, classes) probability tensor whose two most probable classes are closer
    than ``margin`` (none for a one-class model)."""
    if probs.shape[-1] < 2:
        return []
    top_two = probs.topk(2, dim=-1).values
    return [int(i) for i in (top_two[:, 0] - top_two[:, 1] < margin).nonzero().flatten().tolist()]


class NLIScorer:
    """Class probabilities for (premise, hypothesis) pairs with any HF sequence-classification
    NLI model (see the module docstring)."""

    def __init__(self, config: NLIKnobs, cache: CallCache | None = None) -> None:
        self.config = config
        self.cache = cache
        #: what P(contradict) runs on, chosen once (:mod:`hallulab.nli.runtimes`)
        self.runtime: NLIRuntime = runtime_named(config.runtime)
        #: pairs whose classes this scorer re-scored in float32 (:attr:`NLIKnobs.recheck_margin`)
        self.rechecked_pairs = 0

    @cached_property
    def _loaded(self) -> tuple[Any, Any, str]:
        tokenizer, model, device = self._load(self.config.dtype, compile=self.config.compile)
        limit = model_max_length(tokenizer, model, self.config.max_length)
        return tokenizer, self.runtime.prepare(model, tokenizer, self._weights_key, limit, device), device

    def _weights_key(self) -> str:
        """The model, revision and weights, as a runtime's saved graph is keyed."""
        return json.dumps([self.config.model, self.config.revision, self._weights_digest()])

    def _weights_digest(self) -> str:
        return local_weights_digest(model_source(self.config.model))

    def load(self) -> None:
        """Load now every model this scorer will call (its float32 copy too, when it rechecks
        class decisions), e.g. before a timed region."""
        self._loaded  # noqa: B018
        if self.rechecks_classes:
            self._exact_model  # noqa: B018

    @cached_property
    def _exact_model(self) -> Any:
        """The same weights in float32, not compiled: what a class decision near a tie is
        re-scored with (:attr:`NLIKnobs.recheck_margin`)."""
        return self._load("float32", compile=False)[1]

    def _load(self, dtype_name: str, *, compile: bool) -> tuple[Any, Any, str]:
        import torch
        import transformers

        kwargs = {"revision": self.config.revision} if self.config.revision else {}
        device = self.config.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        source = model_source(self.config.model)
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(source, **kwargs)
            model = transformers.AutoModelForSequenceClassification.from_pretrained(source, **kwargs)
        except OSError as error:
            raise hub_model_error(source, error) from error
        label_indices(model.config)  # fail early, naming the labels, when they are not usable
        dtype = getattr(torch, dtype_name)
        model = model.to(device=device, dtype=dtype).eval()
        if compile:
            model = compiled_for_inference(model, device)
        return tokenizer, model, device

    @cached_property
    def max_length(self) -> int:
        tokenizer, model, _ = self._loaded
        return model_max_length(tokenizer, model, self.config.max_length)

    @cached_property
    def identity(self) -> dict[str, Any]:
        """What the cache key holds: hub id + revision, or a local folder's weight hashes
        (a retrained offline model at the same path is a different model)."""
        model = self._loaded[1]
        identity: dict[str, Any] = {
            "model": self.config.model,
            "revision": self.config.revision or getattr(model.config, "_commit_hash", None) or "",
            "weights": self._weights_digest(),
            "labels": list(label_indices(model.config)),
            "max_length": self.max_length,
        }
        if self.config.dtype != "float32":  # float32 keys stay as they were before the knob existed
            identity["dtype"] = self.config.dtype
        if self.config.compile:  # fused kernels round differently; uncompiled keys stay as they were
            identity["compiled"] = True
        runtime = self.runtime.key_part()
        if runtime is not None:  # another runtime, other numbers; torch keys stay as they were
            identity["runtime"] = runtime
        return identity

    def _logits(self, pairs: list[tuple[str, str]], *, exact: bool = False) -> Any:
        """Logits of the configured model, or (``exact``) of its float32 copy at exact lengths."""
        tokenizer, model, device = self._loaded
        return pair_logits(
            tokenizer,
            self._exact_model if exact else model,
            [p[0] for p in pairs],
            [p[1] for p in pairs],
            batch_size=self.config.batch_size,
            max_length=self.max_length,
            device=device,
            pad_to_multiple_of=None if exact else self.pad_to_multiple_of,
            min_batch_rows=2 if self.config.compile and not exact else 1,
        )

    @property
    def rechecks_classes(self) -> bool:
        """Whether class decisions near a tie are re-scored in float32: a reduced-precision
        dtype with a positive :attr:`NLIKnobs.recheck_margin` (the int8 runtime takes every
        class decision from float32 torch, see :meth:`_classes`)."""
        return self.config.dtype != "float32" and self.config.recheck_margin > 0

    @cached_property
    def pad_to_multiple_of(self) -> int | None:
        """:data:`REDUCED_PRECISION_PAD` for bfloat16 and float16 where the length limit is a
        multiple of it (so padding never passes the limit); None (exact lengths) otherwise."""
        reduced = self.config.dtype != "float32"
        return REDUCED_PRECISION_PAD if reduced and self.max_length % REDUCED_PRECISION_PAD == 0 else None

    def truncated_pairs(self, texts: Sequence[str], text_pairs: Sequence[str]) -> int:
        """How many distinct (text, text_pair) pairs are longer than :attr:`max_length` tokens,
        so that the model reads them cut (the longer side loses its end, as ``truncation=True``
        does): a score stage reports it beside its scores rather than losing words unseen."""
        tokenizer = self._loaded[0]
        unique = list(dict.fromkeys(zip(texts, text_pairs, strict=True)))
        limit = self.max_length
        over = 0
        for start in range(0, len(unique), 256):
            chunk = unique[start : start + 256]
            encoded = tokenizer([a for a, _ in chunk], [b for _, b in chunk], truncation=False, verbose=False)
            over += sum(len(ids) > limit for ids in encoded["input_ids"])
        return over

    def _contradiction(self, pairs: list[tuple[str, str]]) -> list[float]:
        import torch

        entail, contra = label_indices(self._loaded[1].config)
        logits = self._logits(pairs)
        two = torch.stack([logits[:, entail], logits[:, contra]], dim=-1)
        return [float(x) for x in torch.softmax(two, dim=-1)[:, 1]]

    def _classes(self, pairs: list[tuple[str, str]]) -> list[list[float]]:
        """Class probabilities; with :attr:`rechecks_classes`, the rows whose two most probable
        classes are within ``recheck_margin`` of each other come from the float32 copy.

        CCP reads only the argmax class of a pair (Fadeeva et al., 2024, §4.2.2), a decision
        that rounding can flip only where two classes are nearly tied. Rounding moves each
        probability by at most some error e, so the gap between two classes by at most 2e:
        a margin above 2e keeps every class float32's, at the cost of re-scoring the
        near-ties. The default 0.05 is empirical, not that bound: it is about twice the widest
        gap at which bfloat16 flipped a class on all of FactualBio's CCP pairs, and with it no
        class flipped (benchmark section ``ccp_bfloat16``)."""
        import torch

        order = label_order(self._loaded[1].config)
        if self.runtime.exact_classes:
            # the runtime moves class probabilities by more than any near-tie margin
            # (hallulab.nli.runtimes): every class comes from the float32 torch copy
            probs = torch.softmax(self._logits(pairs, exact=True), dim=-1)
        else:
            probs = torch.softmax(self._logits(pairs), dim=-1)
        if self.rechecks_classes:
            near_ties = near_tie_rows(probs, self.config.recheck_margin)
            if near_ties:
                exact = self._logits([pairs[i] for i in near_ties], exact=True)
                probs[near_ties] = torch.softmax(exact, dim=-1)
                self.rechecked_pairs += len(near_ties)
        columns = [order.get(name) for name in NLI_LABELS]
        return [[float(row[c]) if c is not None else 0.0 for c in columns] for row in probs]

    @staticmethod
    def _keys(kind: str, identity: dict[str, Any], pairs: Sequence[tuple[str, str]]) -> list[str]:
        return [cache_key(kind, identity, p, h) for p, h in pairs]

    def contradiction_keys(self, sentences: Sequence[str], samples: Sequence[str]) -> list[str]:
        """The call-cache keys under which :meth:`pair_probs` stores P(contradict) of each
        (sentence, sample) pair, in the configured pair order (loads the model: its identity)."""
        first, second = (sentences, samples) if self.config.pair_order == "sentence_first" else (samples, sentences)
        return self._keys("nli.contradiction", self.identity, list(zip(first, second, strict=True)))

    def _cached(self, kind: str, pairs: list[tuple[str, str]], compute: Any, progress: str | None) -> list[Any]:
        unique = sorted(dict.fromkeys(pairs), key=lambda pair: len(pair[0]) + len(pair[1]))
        if self.cache is None:
            values = dict(zip(unique, compute(unique), strict=True))
        else:
            identity = self.identity
            if kind == "nli.classes" and self.rechecks_classes:  # P(contradict) is never rechecked
                identity = {**identity, "recheck_margin": self.config.recheck_margin}
            if kind == "nli.classes" and self.runtime.exact_classes:  # float32 torch's classes, its keys
                identity = {key: value for key, value in identity.items() if key != "runtime"}
            keys = self._keys(kind, identity, unique)
            # a chunk is whole model batches of consecutive length-sorted pairs, so the chunk size
            # changes no float sum; it is the unit a sharded run splits (hallulab.core.call_cache)
            computed = self.cache.map(
                keys, unique, compute, batch_size=8 * self.config.batch_size, progress=progress, spread=True
            )
            values = dict(zip(unique, computed, strict=True))
        return [values[p] for p in pairs]

    def pair_probs(self, sentences: Sequence[str], samples: Sequence[str], *, progress: bool = False) -> np.ndarray:
        """P(contradict | sentence, sample) per pair, in the configured pair order."""
        if self.config.pair_order == "sentence_first":
            return self.contradiction_probs(sentences, samples, progress=progress)
        return self.contradiction_probs(samples, sentences, progress=progress)

    def contradiction_probs(
        self, texts: Sequence[str], text_pairs: Sequence[str], *, progress: bool = False
    ) -> np.ndarray:
        """P(contradict) = softmax over the entailment and contradiction logits (SelfCheckGPT
        Eq. 9) per (text, text_pair) as the tokenizer pairs them; duplicates scored once."""
        pairs = list(zip(texts, text_pairs, strict=True))
        values = self._cached("nli.contradiction", pairs, self._contradiction, "NLI pairs" if progress else None)
        return np.asarray(values, dtype=np.float64)

    def class_probs(self, premises: Sequence[str], hypotheses: Sequence[str], *, progress: bool = False) -> np.ndarray:
        """(n, 3) softmax probabilities over (entailment, neutral, contradiction) for each pair;
        a 2-label model gets 0 for neutral."""
        pairs = list(zip(premises, hypotheses, strict=True))
        values = self._cached("nli.classes", pairs, self._classes, "NLI pairs" if progress else None)
        return np.asarray(values, dtype=np.float64).reshape(len(pairs), len(NLI_LABELS))
