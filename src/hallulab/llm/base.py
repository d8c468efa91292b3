"""The LLM interface every backend implements, and the records it returns.

What a method may ask of an LLM:
  * :meth:`LLM.generate`: batched generation, greedy or sampled (temperature, top-p,
    per-request seed). White-box backends also return, for every generated token, its
    log-probability, the entropy of the full next-token distribution and the top-K
    alternatives with their log-probabilities.
  * :meth:`LLM.score`: teacher-forced scoring of a given continuation after a given
    prefix: the same per-token statistics, for text the model did not write (the
    SelfCheckGPT "proxy LLM" baselines, CCP on pre-generated responses).
  * :meth:`LLM.constrained_search`: beam search whose answers must contain one of a set of
    strings (Self-Familiarity's concept inference; white-box backends that own the decoding
    loop).

A backend declares what it can do with :attr:`LLM.capabilities`; methods check it and
fail early with a clear message instead of producing NaNs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from hallulab.core.call_cache import PartialResults
from hallulab.core.errors import UserFacingError
from hallulab.core.token_stats import TokenStats


class PartialBatchError(PartialResults):
    """A backend got replies for part of a batch (``results``: position -> Generation) and
    errors for the rest; the cached wrapper stores the replies before re-raising."""


#: A prompt is plain text, or chat messages [{"role": ..., "content": ...}, ...].
Prompt = str | Sequence[Mapping[str, str]]


def prompt_text(prompt: Prompt) -> str:
    """A prompt as plain text (messages' contents joined by newlines) for non-chat endpoints."""
    return prompt if isinstance(prompt, str) else "\n".join(m["content"] for m in prompt)


@dataclass(frozen=True)
class DecodingParams:
    """How to decode. ``temperature == 0`` means greedy (``top_p`` and ``seed`` unused).
    ``num_beams > 1`` is beam search: deterministic at ``temperature == 0``, else beam search
    with multinomial sampling (transformers' beam sample: each step's candidates drawn from the
    temperature / top-p distribution, seeded per request), on backends that support it."""

    max_new_tokens: int = 128
    temperature: float = 0.0
    top_p: float = 1.0
    top_k_alternatives: int = 0
    stop: tuple[str, ...] = ()
    num_beams: int = 1  # > 1: beam search (sampling when temperature > 0; backends that support it)
    #: beam search ends once ``num_beams`` finished candidates exist (transformers'
    #: ``early_stopping=True``), instead of when no better one can be found
    early_stopping: bool = False

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.num_beams < 1:
            raise ValueError(f"num_beams must be >= 1, got {self.num_beams}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def as_key(self) -> dict[str, Any]:
        key = asdict(self)
        if self.num_beams == 1:  # keys of calls made before beam search existed stay valid
            del key["num_beams"]
        if not self.early_stopping:  # keys of calls made before the setting existed stay valid
            del key["early_stopping"]
        return key


@dataclass(frozen=True)
class Generation:
    """A generated text and, from white-box backends, its per-token statistics."""

    text: str
    tokens: tuple[TokenStats, ...] = ()
    finish_reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "finish_reason": self.finish_reason, "tokens": [t.to_dict() for t in self.tokens]}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Generation:
        return cls(
            text=raw["text"],
            finish_reason=raw.get("finish_reason", ""),
            tokens=tuple(TokenStats.from_dict(t) for t in raw.get("tokens", [])),
        )


class MissingTokenStatsError(RuntimeError, UserFacingError):
    """A method that reads token probabilities got replies without them (a server that omits or
    nulls ``logprobs``); its scores would otherwise be silently constant."""


class ContextLengthError(ValueError, UserFacingError):
    """Teacher forcing asked for more positions than the model has; ``continuations`` are the
    offending texts (a cache layer may batch requests differently), so the caller can name
    its records."""

    def __init__(self, continuations: Sequence[str], lengths: Sequence[int], limit: int) -> None:
        self.continuations = tuple(continuations)
        self.lengths = tuple(lengths)
        self.limit = limit
        super().__init__(
            f"{len(self.continuations)} teacher-forced text(s) need {max(self.lengths)} positions, "
            f"beyond the model's {limit}"
        )


def require_token_stats(replies: Sequence[Generation], role: str, need: str, top_k: int = 0) -> None:
    """Every non-empty reply carries per-token log-probabilities (and, with ``top_k``, some
    top-K alternatives); else one error naming the role, the count and what the method needs."""
    texts = [g for g in replies if g.text.strip()]
    missing = [g for g in texts if not g.tokens or (top_k and not any(t.top for t in g.tokens))]
    wanted = f"top-{top_k} log-probabilities" if top_k else "token log-probabilities"
    if missing:
        raise MissingTokenStatsError(
            f"llms.{role}: {len(missing)} of {len(texts)} replies came without {wanted}; {need} reads them "
            "(choose a catalogue entry whose server returns logprobs)"
        )
    if top_k and texts and all(_placeholder(g) for g in texts):
        raise MissingTokenStatsError(
            f"llms.{role}: every reply came with placeholder {wanted} (all alternatives of every step equal); "
            f"{need} would read every step as a guess (check the server's logprobs support)"
        )


def _placeholder(reply: Generation) -> bool:
    """Every step's alternatives share one log-probability: what a server that fills the field
    without computing it sends (a real model is never indifferent at every step of every reply)."""
    steps = [t.top for t in reply.tokens if len(t.top) > 1]
    return bool(steps) and all(len({lp for _, lp in top}) == 1 for top in steps)


NORMALISATIONS = ("answer", "total")


@dataclass(frozen=True)
class ConstrainedParams:
    """Constrained beam search (Self-Familiarity, Appendix D): beam size T_B and the answer
    length l_B; the search may write l_B tokens plus one per constraint string (the released
    Self-Familiarity code caps the whole sequence at the prompt, the number of constraint
    strings and l_B).

    ``normalise``: how the finished hypotheses are ranked (and cut to T_B): ``answer``, by
    sum / length; ``total``, by sum / (P + length), P being the prompt's length in tokens
    (:attr:`ConstrainedResult.prompt_tokens`), as transformers' beam scorer ranked them for a
    decoder-only model before 4.36. ``prompt_as_is``: the prompts are the model's input text
    already (wrapped by the caller, as the released code wraps and then masks its prompt): the
    backend adds its BOS token when configured and nothing else."""

    beam_size: int = 30
    max_new_tokens: int = 15
    normalise: str = "answer"
    prompt_as_is: bool = False

    def __post_init__(self) -> None:
        if self.beam_size < 1 or self.max_new_tokens < 1:
            raise ValueError(f"beam_size and max_new_tokens must be >= 1, got {self.beam_size}, {self.max_new_tokens}")
        if self.normalise not in NORMALISATIONS:
            raise ValueError(f"normalise must be one of {list(NORMALISATIONS)}, got {self.normalise!r}")

    def as_key(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ConstrainedResult:
    """Finished hypotheses (best first, ranked as :attr:`ConstrainedParams.normalise` says)
    that contain one of the constraint strings. ``prompt_tokens``: P, the prompt length the
    ``total`` normalisation adds (the length text's tokens with BOS when the caller gave one,
    else the model's input); ``input_tokens``: the model's input as it was given, in tokens;
    ``forced``: how many distinct token sequences the constraint strings became (0: nothing to
    force)."""

    hypotheses: tuple[Mapping[str, Any], ...]  # {"text", "logprob", "length", "ended"}
    prompt_tokens: int
    forced: int
    input_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "hypotheses": [dict(h) for h in self.hypotheses],
            "prompt_tokens": self.prompt_tokens,
            "forced": self.forced,
            "input_tokens": self.input_tokens,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> ConstrainedResult:
        prompt_tokens = int(raw["prompt_tokens"])
        return cls(
            tuple(raw["hypotheses"]), prompt_tokens, int(raw["forced"]), int(raw.get("input_tokens", prompt_tokens))
        )


@dataclass(frozen=True)
class Capabilities:
    """What a backend (as configured) can return."""

    token_logprobs: bool = False
    full_entropy: bool = False
    top_k_alternatives: bool = False
    teacher_forcing: bool = False
    chat: bool = True
    constrained_search: bool = False


@dataclass
class LLMIdentity:
    """Everything about the model that changes its outputs (the cache key's model part)."""

    backend: str
    model: str
    revision: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def as_key(self) -> dict[str, Any]:
        return asdict(self)


class LLM(ABC):
    """A language model behind one of the backends."""

    capabilities: Capabilities

    @abstractmethod
    def identity(self) -> LLMIdentity:
        """Model identity for cache keys (backend, model id, revision or file hash, dtype...)."""

    @abstractmethod
    def generate(
        self, prompts: Sequence[Prompt], params: DecodingParams, seeds: Sequence[int | None]
    ) -> list[Generation]:
        """One generation per prompt; ``seeds[i]`` seeds request i when sampling."""

    def score(self, prefixes: Sequence[Prompt], continuations: Sequence[str], top_k: int = 0) -> list[list[TokenStats]]:
        """Teacher-forced statistics of each continuation after its prefix."""
        raise NotImplementedError(f"{type(self).__name__} cannot teacher-force text (no white-box access)")

    def constrained_search(
        self,
        prompts: Sequence[Prompt],
        constraints: Sequence[Sequence[str]],
        params: ConstrainedParams,
        length_texts: Sequence[str | None] | None = None,
    ) -> list[ConstrainedResult]:
        """For each prompt, beam search whose answers must contain one of its constraint strings;
        ``length_texts[i]``, when given, is the text whose tokens (after a BOS token) are the
        prompt length P of prompt i, in place of the model's input."""
        raise NotImplementedError(
            f"{type(self).__name__} cannot run constrained beam search (it needs the decoding loop: backend hf)"
        )

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (connections, GPU memory)."""
