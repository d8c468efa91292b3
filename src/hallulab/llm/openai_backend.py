"""The ``openai`` backend: any OpenAI-compatible server through the official client.

Works with ``vllm serve``, llama.cpp's ``llama-server`` / ``llama_cpp.server``, and hosted
APIs. Chat or completions endpoints; ``logprobs`` / ``top_logprobs`` when the server
returns them (white-box-lite: the chosen token's log-probability and the top-K, no full
entropy). Requests run concurrently up to ``max_concurrency``; the client retries
connection errors, 429 and 5xx with exponential backoff (``max_retries``). The API key is
read only from the environment variable named by ``api_key_env``; local servers that need
no key get a placeholder when the variable is unset and ``base_url`` is given.

Server quirks handled (``server``):
  * ``llamacpp``: ignores ``max_completion_tokens`` -> we send ``max_tokens``; applies a
    repeat penalty of 1.1 unless told otherwise -> we send ``repeat_penalty: 1.0`` so
    samples follow the model's distribution.
  * ``vllm``: ``max_tokens``; ``repetition_penalty: 1.0``; teacher forcing through the
    completions endpoint with ``echo=True`` (prompt log-probabilities).
  * ``openai``: ``max_completion_tokens``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from hallulab.llm.base import (
    LLM,
    Capabilities,
    DecodingParams,
    Generation,
    LLMIdentity,
    Prompt,
    TokenStats,
    prompt_text,
)

SERVERS = ("openai", "vllm", "llamacpp")


@dataclass(frozen=True)
class OpenAIConfig:
    """``conf/llm/*.yaml`` for ``backend: openai``."""

    model: str = ""
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    mode: str = "chat"
    server: str = "openai"
    max_concurrency: int = 8
    max_retries: int = 5
    timeout: float = 120.0
    revision: str = ""
    system_prompt: str | None = None


class OpenAILLM(LLM):
    """OpenAI-compatible client backend (see module docstring)."""

    def __init__(self, config: OpenAIConfig) -> None:
        if config.server not in SERVERS:
            raise ValueError(f"llm.server must be one of {SERVERS}, got {config.server!r}")
        if config.mode not in ("chat", "completions"):
            raise ValueError(f"llm.mode must be chat or completions, got {config.mode!r}")
        self.config = config
        self.capabilities = Capabilities(
            token_logprobs=True,
            full_entropy=False,
            top_k_alternatives=True,
            teacher_forcing=config.server == "vllm",
            chat=config.mode == "chat",
        )

    def identity(self) -> LLMIdentity:
        return LLMIdentity(
            backend="openai",
            model=self.config.model,
            revision=self.config.revision,
            extra={"server": self.config.server, "mode": self.config.mode, "system": self.config.system_prompt},
        )

    @cached_property
    def client(self) -> Any:
        openai = importlib.import_module("openai")
        key = os.environ.get(self.config.api_key_env)
        if not key:
            if self.config.base_url is None:
                raise RuntimeError(f"set {self.config.api_key_env} to call the hosted API")
            key = "not-needed"
        return openai.OpenAI(
            api_key=key, base_url=self.config.base_url, max_retries=self.config.max_retries, timeout=self.config.timeout
        )

    def _limit_field(self) -> str:
        return "max_completion_tokens" if self.config.server == "openai" else "max_tokens"

    def _extra_body(self) -> dict[str, Any]:
        if self.config.server == "llamacpp":
            return {"repeat_penalty": 1.0}
        if self.config.server == "vllm":
            return {"repetition_penalty": 1.0}
        return {}

    def _messages(self, prompt: Prompt) -> list[dict[str, str]]:
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else [dict(m) for m in prompt]
        if self.config.system_prompt and messages[0]["role"] != "system":
            messages.insert(0, {"role": "system", "content": self.config.system_prompt})
        return messages

    def _request(self, prompt: Prompt, params: DecodingParams, seed: int | None) -> Generation:
        common: dict[str, Any] = {
            "model": self.config.model,
            self._limit_field(): params.max_new_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "extra_body": self._extra_body(),
        }
        if seed is not None and not params.greedy:
            common["seed"] = int(seed)
        if params.stop:
            common["stop"] = list(params.stop)
        if self.config.mode == "chat":
            common["logprobs"] = True
            if params.top_k_alternatives:
                common["top_logprobs"] = params.top_k_alternatives
            response = self.client.chat.completions.create(messages=self._messages(prompt), **common)
            choice = response.choices[0]
            return Generation(
                text=choice.message.content or "",
                tokens=_chat_token_stats(choice.logprobs),
                finish_reason=choice.finish_reason or "",
            )
        text = prompt_text(prompt)
        common["logprobs"] = max(params.top_k_alternatives, 1)
        response = self.client.completions.create(prompt=text, **common)
        choice = response.choices[0]
        return Generation(
            text=choice.text or "",
            tokens=_completion_token_stats(choice.logprobs, 0),
            finish_reason=choice.finish_reason or "",
        )

    def generate(
        self, prompts: Sequence[Prompt], params: DecodingParams, seeds: Sequence[int | None]
    ) -> list[Generation]:
        with ThreadPoolExecutor(max_workers=self.config.max_concurrency) as pool:
            return list(pool.map(lambda a: self._request(a[0], params, a[1]), zip(prompts, seeds, strict=True)))

    def score(self, prefixes: Sequence[Prompt], continuations: Sequence[str], top_k: int = 0) -> list[list[TokenStats]]:
        """Prompt log-probabilities via ``echo`` (vLLM's completions endpoint)."""
        if not self.capabilities.teacher_forcing:
            raise NotImplementedError(f"server {self.config.server!r} returns no prompt log-probabilities")

        def one(pair: tuple[Prompt, str]) -> list[TokenStats]:
            prefix = prompt_text(pair[0])
            response = self.client.completions.create(
                model=self.config.model,
                prompt=prefix + pair[1],
                max_tokens=1,
                echo=True,
                logprobs=max(top_k, 1),
                temperature=0.0,
            )
            return list(_completion_token_stats(response.choices[0].logprobs, len(prefix)))

        with ThreadPoolExecutor(max_workers=self.config.max_concurrency) as pool:
            return list(pool.map(one, zip(prefixes, continuations, strict=True)))


def _chat_token_stats(logprobs: Any) -> tuple[TokenStats, ...]:
    if logprobs is None or not getattr(logprobs, "content", None):
        return ()
    stats, offset = [], 0
    for item in logprobs.content:
        top = tuple((t.token, float(t.logprob)) for t in (item.top_logprobs or []))
        stats.append(TokenStats(token=item.token, logprob=float(item.logprob), top=top, offset=offset))
        offset += len(item.token)
    return tuple(stats)


def _completion_token_stats(logprobs: Any, start_offset: int) -> tuple[TokenStats, ...]:
    """Legacy completions logprobs; keeps tokens at or after ``start_offset`` (echoed prefix dropped)."""
    if logprobs is None or not logprobs.tokens:
        return ()
    offsets = logprobs.text_offset or [None] * len(logprobs.tokens)
    stats = []
    for token, logprob, top, offset in zip(
        logprobs.tokens,
        logprobs.token_logprobs,
        logprobs.top_logprobs or [None] * len(logprobs.tokens),
        offsets,
        strict=True,
    ):
        if logprob is None or (offset is not None and offset < start_offset):
            continue
        alternatives = tuple((t, float(v)) for t, v in (top or {}).items())
        stats.append(
            TokenStats(
                token=token,
                logprob=float(logprob),
                top=alternatives,
                offset=None if offset is None else offset - start_offset,
            )
        )
    return tuple(stats)
