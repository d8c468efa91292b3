"""The ``langchain`` backend: any LangChain chat model (``BaseChatModel``) fills an LLM role.

``chat_model`` in the config is a Hydra ``_target_`` block, instantiated with
``hydra.utils.instantiate``, so every provider LangChain supports plugs in without code:

    backend: langchain
    chat_model:
      _target_: langchain_openai.ChatOpenAI    # or langchain_anthropic.ChatAnthropic, ...
      model: gpt-4o
    api_key_env: OPENAI_API_KEY               # read from the environment only, never stored

Requests of a batch run concurrently (``Runnable.batch``, ``max_concurrency``); every call
still goes through the call cache (:class:`hallulab.llm.cached.CachedLLM`). A LangChain
chat model is black-box: text only, unless ``logprobs: true`` and the model returns
OpenAI-style log-probabilities in ``response_metadata`` (``ChatOpenAI`` does), which gives
the chosen token's log-probability and the top-K alternatives.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from hallulab.core.config import ConfigError, setting
from hallulab.core.token_stats import TokenStats
from hallulab.llm.base import (
    LLM,
    Capabilities,
    DecodingParams,
    Generation,
    LLMIdentity,
    PartialBatchError,
    Prompt,
)

_ROLES = {"system": "system", "user": "human", "assistant": "ai"}
_SECRET_WORDS = ("key", "token", "secret", "password")


@dataclass(frozen=True)
class LangChainKnobs:
    """``conf/llm/*.yaml`` for ``backend: langchain``."""

    chat_model: Mapping[str, Any] = field(default_factory=dict)
    api_key_env: str | None = None
    api_key_argument: str = "api_key"
    max_concurrency: int = setting(4, minimum=1)
    max_tokens_argument: str = "max_tokens"
    logprobs: bool = False
    seed_argument: str | None = "seed"
    revision: str = ""


class LangChainLLM(LLM):
    """A LangChain chat model behind the hallulab LLM interface (see the module docstring)."""

    def __init__(self, config: LangChainKnobs) -> None:
        if "_target_" not in config.chat_model:
            raise ValueError("llm.chat_model needs a `_target_` naming the LangChain chat model class")
        self.config = config
        self.capabilities = Capabilities(
            token_logprobs=config.logprobs, top_k_alternatives=config.logprobs, teacher_forcing=False, chat=True
        )

    def identity(self) -> LLMIdentity:
        kwargs = {k: v for k, v in self.config.chat_model.items() if not any(w in k.lower() for w in _SECRET_WORDS)}
        return LLMIdentity(
            backend="langchain",
            model=str(self.config.chat_model.get("model", self.config.chat_model["_target_"])),
            revision=self.config.revision,
            extra={"chat_model": kwargs, "logprobs": self.config.logprobs},
        )

    @cached_property
    def model(self) -> Any:
        from hydra.utils import instantiate

        kwargs: dict[str, Any] = {}
        if self.config.api_key_env:
            key = os.environ.get(self.config.api_key_env)
            if key:
                kwargs[self.config.api_key_argument] = key
            elif self.config.chat_model.get("base_url"):
                kwargs[self.config.api_key_argument] = "not-needed"  # a local server
            else:
                raise RuntimeError(f"set {self.config.api_key_env} to call {self.config.chat_model['_target_']}")
        target = str(self.config.chat_model.get("_target_", ""))
        try:
            importlib.import_module(target.rsplit(".", 1)[0])
        except ImportError as error:
            raise ConfigError(
                f"chat_model._target_ {target!r}: {error}; install its package "
                "(langchain_openai: pip install 'hallulab[langchain]')"
            ) from error
        return instantiate(dict(self.config.chat_model), **kwargs)

    @staticmethod
    def _messages(prompt: Prompt) -> list[tuple[str, str]]:
        if isinstance(prompt, str):
            return [("human", prompt)]
        return [(_ROLES.get(m["role"], m["role"]), m["content"]) for m in prompt]

    def _bound(self, params: DecodingParams, seed: int | None) -> Any:
        kwargs: dict[str, Any] = {
            self.config.max_tokens_argument: params.max_new_tokens,
            "temperature": params.temperature,
        }
        if not params.greedy:
            kwargs["top_p"] = params.top_p
            if seed is not None and self.config.seed_argument:
                kwargs[self.config.seed_argument] = int(seed)
        if params.stop:
            kwargs["stop"] = list(params.stop)
        if self.config.logprobs:
            kwargs["logprobs"] = True
            if params.top_k_alternatives:
                kwargs["top_logprobs"] = params.top_k_alternatives
        return self.model.bind(**kwargs)

    def generate(
        self, prompts: Sequence[Prompt], params: DecodingParams, seeds: Sequence[int | None]
    ) -> list[Generation]:
        from langchain_core.messages import BaseMessage

        groups: dict[int | None, list[int]] = {}
        for index, seed in enumerate(seeds):
            groups.setdefault(None if params.greedy else seed, []).append(index)
        results: dict[int, Generation] = {}
        errors: dict[int, BaseException] = {}
        for seed, indices in groups.items():
            replies = self._bound(params, seed).batch(
                [self._messages(prompts[i]) for i in indices],
                config={"max_concurrency": self.config.max_concurrency},
                return_exceptions=True,
            )
            for index, reply in zip(indices, replies, strict=True):
                if isinstance(reply, BaseException):
                    errors[index] = reply
                elif not isinstance(reply, BaseMessage):
                    errors[index] = TypeError(f"the chat model returned {type(reply).__name__}, not a message")
                else:
                    results[index] = _generation(reply)
        if errors:
            raise PartialBatchError(results, errors, f"{len(errors)} of {len(prompts)} LangChain calls failed")
        return [results[i] for i in range(len(prompts))]


def _generation(reply: Any) -> Generation:
    content = (
        reply.content
        if isinstance(reply.content, str)
        else "".join(part.get("text", "") if isinstance(part, Mapping) else str(part) for part in reply.content)
    )
    metadata = getattr(reply, "response_metadata", {}) or {}
    tokens: list[TokenStats] = []
    offset = 0
    for item in (metadata.get("logprobs") or {}).get("content") or []:
        top = tuple((str(t["token"]), float(t["logprob"])) for t in item.get("top_logprobs") or [])
        tokens.append(TokenStats(token=str(item["token"]), logprob=float(item["logprob"]), top=top, offset=offset))
        offset += len(str(item["token"]))
    return Generation(text=content, tokens=tuple(tokens), finish_reason=str(metadata.get("finish_reason") or ""))
