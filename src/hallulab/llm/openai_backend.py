"""The ``openai`` backend: any OpenAI-compatible server through the official client.

Works with ``vllm serve``, llama.cpp's ``llama-server`` / ``llama_cpp.server``, and hosted
APIs. Chat or completions endpoints; ``logprobs`` / ``top_logprobs`` when the server
returns them (white-box-lite: the chosen token's log-probability and the top-K, no full
entropy). Requests run concurrently up to ``max_concurrency`` (per endpoint of a fleet). The API key is read only
from the environment variable named by ``api_key_env``; local servers that need no key get
a placeholder when the variable is unset and ``base_url`` is given.

Every reply is checked before use: an HTTP 200 whose body is not JSON (an HTML error page
from a proxy), JSON without ``choices``, an empty ``choices`` list or truncated JSON is a
malformed reply. Transient failures (connection errors, timeouts, 429, 5xx, malformed
replies) are retried with exponential backoff, at most ``max_retries`` times and within
``request_budget`` seconds per request (each attempt limited to ``timeout``), so one hung
request costs at most the budget. The final error names the URL, the model and what came
back. Other errors (400, 401, 404: a wrong model name or key) fail at once. When some
requests of a batch fail, the replies that did arrive are returned to the call cache
(:class:`hallulab.llm.base.PartialBatchError`), so a re-run asks only for the missing ones.
A server that stops answering stops the batch: once one request has spent its retries on
connection errors, the requests not yet sent fail at once with the same words instead of
each retrying alone (a dead port costs one request's retries, not the batch's).

A fleet (``endpoints``: several URLs serving one model, in place of ``base_url``) spreads the
requests over its replicas by :mod:`hallulab.llm.fleet`: fewest outstanding first, an endpoint
set aside after ``set_aside_after`` failures in a row and tried again ``retry_after`` seconds
later, a failed request sent on at once to another live endpoint, and a fleet with no live
endpoint stopping with one line naming each. Its replies are keyed by the model's declared
identity (model, revision, server, mode, system prompt), not by the replica that answered;
one ``base_url`` keeps the URL in the key.

Server quirks handled (``server``):
  * ``llamacpp``: ignores ``max_completion_tokens`` -> we send ``max_tokens``; applies a
    repeat penalty of 1.1 unless told otherwise -> we send ``repeat_penalty: 1.0`` so
    samples follow the model's distribution.
  * ``vllm``: ``max_tokens``; ``repetition_penalty: 1.0``; teacher forcing through the
    completions endpoint with ``echo=True`` (prompt log-probabilities).
  * ``openai``: ``max_completion_tokens``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from hallulab.core.config import ConfigError, setting
from hallulab.core.errors import UserFacingError
from hallulab.llm.base import (
    LLM,
    Capabilities,
    DecodingParams,
    Generation,
    LLMIdentity,
    PartialBatchError,
    Prompt,
    TokenStats,
    prompt_text,
)
from hallulab.llm.fleet import Endpoint, Fleet

SERVERS = ("openai", "vllm", "llamacpp")
MODES = ("chat", "completions")


class ServerReplyError(RuntimeError, UserFacingError):
    """An OpenAI-compatible server failed, or kept answering with malformed replies."""


class _Malformed(Exception):
    """A reply that is not what the API promises (retried: proxies and overloaded servers do this)."""

    def __init__(self, what: str, body: str) -> None:
        super().__init__(what)
        self.what = what
        self.body = body


@dataclass(frozen=True)
class OpenAIKnobs:
    """``conf/llm/*.yaml`` for ``backend: openai``."""

    model: str = ""
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    mode: str = setting("chat", choices=MODES)
    server: str = setting("openai", choices=SERVERS)
    max_concurrency: int = setting(8, minimum=1, doc="requests in flight at once, per endpoint")
    max_retries: int = setting(3, minimum=0, doc="retries of a transient failure, per request")
    timeout: float = setting(60.0, above=0.0, doc="seconds per attempt")
    request_budget: float = setting(300.0, above=0.0, doc="seconds for all attempts of one request, backoff included")
    revision: str = ""
    system_prompt: str | None = None
    endpoints: tuple[str, ...] = setting(
        (),
        empty_ok=True,
        doc="a fleet: URLs of replicas serving one model, in place of base_url (replies keyed by model, not URL)",
    )
    set_aside_after: int = setting(2, minimum=1, doc="a fleet endpoint's failures in a row before it is set aside")
    retry_after: float = setting(30.0, above=0.0, doc="seconds a fleet endpoint stays set aside")


def check_config(config: OpenAIKnobs, where: str = "llm") -> None:
    """Raise :class:`ConfigError` naming ``<where>.<setting>`` for settings that cannot go
    together: a fleet (``endpoints``) beside a ``base_url`` (a catalogue entry's default one
    included), or a URL listed twice."""
    if config.server not in SERVERS:
        raise ConfigError(f"{where}.server: must be one of {list(SERVERS)}, got {config.server!r}")
    if config.mode not in MODES:
        raise ConfigError(f"{where}.mode: must be one of {list(MODES)}, got {config.mode!r}")
    if config.endpoints and config.base_url is not None:
        raise ConfigError(
            f"{where}.endpoints: a fleet replaces {where}.base_url, which is {config.base_url!r}; "
            f"set {where}.base_url=null beside the endpoints, or leave {where}.endpoints empty"
        )
    twice = [url for url in dict.fromkeys(config.endpoints) if config.endpoints.count(url) > 1]
    if twice:
        raise ConfigError(f"{where}.endpoints: lists {twice[0]!r} twice; each replica once")


def _snippet(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "..."


class OpenAILLM(LLM):
    """OpenAI-compatible client backend (see module docstring)."""

    def __init__(self, config: OpenAIKnobs, where: str = "llm") -> None:
        """``where``: the settings' name in errors (``llm_catalogue.<entry>``)."""
        check_config(config, where)
        self.config = config
        self._unreachable: str | None = None  # set when a request spent its retries on connection errors
        self.capabilities = Capabilities(
            token_logprobs=True,
            full_entropy=False,
            top_k_alternatives=True,
            teacher_forcing=config.server == "vllm",
            chat=config.mode == "chat",
        )

    def identity(self) -> LLMIdentity:
        """What the call cache keys replies by. One endpoint's URL is part of it: two servers
        can serve different weights under one model name, and their replies must not be shared
        (moving a server to another address costs its cached replies; ``revision`` pins
        weights explicitly). A fleet declares that its replicas serve one model: its replies
        are keyed by that declaration (model, revision and the settings that change replies),
        so any replica's reply serves, and adding or moving a replica keeps the cache."""
        extra: dict[str, Any] = {
            "server": self.config.server,
            "mode": self.config.mode,
            "system": self.config.system_prompt,
        }
        if not self.config.endpoints:
            extra["endpoint"] = self.url
        return LLMIdentity(backend="openai", model=self.config.model, revision=self.config.revision, extra=extra)

    @property
    def url(self) -> str:
        """Where requests go, as error messages name it (a fleet: its URLs)."""
        if self.config.endpoints:
            return "the fleet " + ", ".join(self.config.endpoints)
        return self.config.base_url or "https://api.openai.com/v1"

    def _make_client(self, base_url: str | None) -> Any:
        import openai

        key = os.environ.get(self.config.api_key_env)
        if not key:
            if base_url is None:
                raise ServerReplyError(f"set {self.config.api_key_env} to call the hosted API at {self.url}")
            key = "not-needed"
        # retries are ours (budgeted, with reply validation); the client makes one attempt
        return openai.OpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=self.config.timeout)

    @cached_property
    def client(self) -> Any:
        """The client of the one endpoint (``base_url``, or the hosted API)."""
        return self._make_client(self.config.base_url)

    @cached_property
    def fleet(self) -> Fleet:
        """The replicas of ``endpoints``, each with its own client."""
        return Fleet(
            [Endpoint(url, self._make_client(url)) for url in self.config.endpoints],
            model=self.config.model,
            set_aside_after=self.config.set_aside_after,
            retry_after=self.config.retry_after,
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

    # ------------------------------------------------------------------ one request, budgeted
    def _attempt(self, client: Any, endpoint: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        """One HTTP request; the parsed, validated JSON body (:class:`_Malformed` otherwise)."""
        api = client.chat.completions if endpoint == "chat" else client.completions
        raw = api.with_raw_response.create(**kwargs)
        body = raw.http_response.text
        try:
            payload = json.loads(body)
        except ValueError:
            raise _Malformed("a body that is not JSON", body) from None
        if not isinstance(payload, dict):
            raise _Malformed("JSON that is not an object", body)
        choices = payload.get("choices")
        if not isinstance(choices, list):
            raise _Malformed("JSON without 'choices'", body)
        if not choices or not isinstance(choices[0], dict):
            raise _Malformed("an empty 'choices' list", body)
        if endpoint == "chat" and not isinstance(choices[0].get("message"), dict):
            raise _Malformed("a choice without 'message'", body)
        return payload

    @staticmethod
    def _transient() -> tuple[type[BaseException], ...]:
        import openai

        return (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError, _Malformed)

    def _call(self, endpoint: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        if self.config.endpoints:
            return self._call_fleet(endpoint, kwargs)
        import openai

        transient = self._transient()
        started = time.monotonic()
        attempt = 0
        while True:
            if self._unreachable is not None:
                raise ServerReplyError(f"{self._unreachable}; the batch's other requests were not sent")
            attempt += 1
            try:
                return self._attempt(self.client, endpoint, kwargs)
            except transient as error:
                elapsed = time.monotonic() - started
                wait = min(2.0 ** (attempt - 1), 30.0)
                if attempt > self.config.max_retries or elapsed + wait >= self.config.request_budget:
                    message = self._describe(error, attempt, elapsed)
                    if isinstance(error, openai.APIConnectionError):
                        self._unreachable = message
                    raise ServerReplyError(message) from None
                time.sleep(wait)
            except openai.APIStatusError as error:  # 4xx other than 429: retrying cannot help
                raise ServerReplyError(self._describe(error, attempt, time.monotonic() - started)) from None

    def _call_fleet(self, endpoint: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        """One request over the fleet: a transient failure is counted against the replica that
        gave it and the request goes on to the next live one at once (after a backoff only when
        that replica is the only one live); at most ``max_retries + 1`` attempts per endpoint and
        ``request_budget`` seconds in all. :class:`FleetDownError` when none is live."""
        import openai

        transient = self._transient()
        started = time.monotonic()
        attempt = 0
        in_a_row = 0  # this request's failures with no other replica to turn to
        member: Endpoint | None = None
        while True:
            member = self.fleet.acquire(avoid=member)
            attempt += 1
            try:
                payload = self._attempt(member.client, endpoint, kwargs)
            except transient as error:
                self.fleet.failed(member, self._what_came_back(error, member.url))
                elapsed = time.monotonic() - started
                if attempt >= (self.config.max_retries + 1) * len(self.config.endpoints):
                    raise ServerReplyError(self._describe(error, attempt, elapsed, member.url)) from None
                if self.fleet.others_live(member):
                    continue
                in_a_row += 1
                wait = min(2.0 ** (in_a_row - 1), 30.0)
                if elapsed + wait >= self.config.request_budget:
                    raise ServerReplyError(self._describe(error, attempt, elapsed, member.url)) from None
                time.sleep(wait)
            except openai.APIStatusError as error:  # 4xx other than 429: the request's fault
                self.fleet.released(member)
                message = self._describe(error, attempt, time.monotonic() - started, member.url)
                raise ServerReplyError(message) from None
            else:
                self.fleet.succeeded(member)
                return payload

    def _what_came_back(self, error: BaseException, url: str) -> str:
        if isinstance(error, _Malformed):
            return f"a malformed reply: {error.what}: {_snippet(error.body)!r}"
        if hasattr(error, "status_code"):
            body = getattr(getattr(error, "response", None), "text", "") or str(error)
            return f"HTTP {error.status_code}: {_snippet(body)!r}"
        return f"{type(error).__name__}: {error} (is the server running at {url}?)"

    def _describe(self, error: BaseException, attempts: int, seconds: float, url: str | None = None) -> str:
        where = url or self.url
        got = self._what_came_back(error, where)
        return f"{where} (model {self.config.model!r}) gave {got}, after {attempts} attempt(s) in {seconds:.0f} s"

    # ------------------------------------------------------------------ the interface
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
            choice = self._call("chat", {"messages": self._messages(prompt), **common})["choices"][0]
            return Generation(
                text=choice["message"].get("content") or "",
                tokens=_chat_token_stats(choice.get("logprobs")),
                finish_reason=choice.get("finish_reason") or "",
            )
        common["logprobs"] = max(params.top_k_alternatives, 1)
        choice = self._call("completions", {"prompt": prompt_text(prompt), **common})["choices"][0]
        return Generation(
            text=choice.get("text") or "",
            tokens=_completion_token_stats(choice.get("logprobs"), 0),
            finish_reason=choice.get("finish_reason") or "",
        )

    def _run_all(self, jobs: Sequence[Any], work: Any, label: str) -> list[Any]:
        """Run ``work(job)`` concurrently; every success is kept even when others fail."""
        results: dict[int, Any] = {}
        errors: dict[int, BaseException] = {}
        self._unreachable = None  # each batch tries the server afresh
        workers = self.config.max_concurrency * max(len(self.config.endpoints), 1)  # per endpoint
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(work, job): index for index, job in enumerate(jobs)}
            for future in as_completed(futures):
                index = futures[future]
                try:
                    results[index] = future.result()
                except Exception as error:
                    errors[index] = error
        if errors and not results:  # nothing arrived: the first error says it all
            raise next(iter(errors.values()))
        if errors:
            raise PartialBatchError(results, errors, f"{len(errors)} of {len(jobs)} {label} failed")
        return [results[i] for i in range(len(jobs))]

    def generate(
        self, prompts: Sequence[Prompt], params: DecodingParams, seeds: Sequence[int | None]
    ) -> list[Generation]:
        jobs = list(zip(prompts, seeds, strict=True))
        return self._run_all(jobs, lambda job: self._request(job[0], params, job[1]), "requests to " + self.url)

    def score(self, prefixes: Sequence[Prompt], continuations: Sequence[str], top_k: int = 0) -> list[list[TokenStats]]:
        """Prompt log-probabilities via ``echo`` (vLLM's completions endpoint)."""
        if not self.capabilities.teacher_forcing:
            raise NotImplementedError(f"server {self.config.server!r} returns no prompt log-probabilities")

        def one(pair: tuple[Prompt, str]) -> list[TokenStats]:
            prefix = prompt_text(pair[0])
            kwargs = {
                "model": self.config.model,
                "prompt": prefix + pair[1],
                "max_tokens": 1,
                "echo": True,
                "logprobs": max(top_k, 1),
                "temperature": 0.0,
            }
            choice = self._call("completions", kwargs)["choices"][0]
            stats = list(_completion_token_stats(choice.get("logprobs"), len(prefix)))
            if pair[1].strip() and not stats:
                raise ServerReplyError(
                    f"{self.url} (model {self.config.model!r}) returned no prompt log-probabilities for a "
                    f"teacher-forced text (echo): the white-box methods need a server that returns them"
                )
            return stats

        return self._run_all(list(zip(prefixes, continuations, strict=True)), one, "scoring requests to " + self.url)


def _chat_token_stats(logprobs: Any) -> tuple[TokenStats, ...]:
    """The reply's token statistics; () when the server sent none, or sent a token whose
    log-probability is null (then it sent no usable probabilities: the consumer says so)."""
    if not isinstance(logprobs, dict) or not logprobs.get("content"):
        return ()
    if any(not isinstance(item, dict) or item.get("logprob") is None for item in logprobs["content"]):
        return ()
    stats, offset = [], 0
    for item in logprobs["content"]:
        alternatives = [t for t in (item.get("top_logprobs") or []) if t.get("logprob") is not None]
        top = tuple((str(t["token"]), float(t["logprob"])) for t in alternatives)
        token = str(item["token"])
        stats.append(TokenStats(token=token, logprob=float(item["logprob"]), top=top, offset=offset))
        offset += len(token)
    return tuple(stats)


def _completion_token_stats(logprobs: Any, start_offset: int) -> tuple[TokenStats, ...]:
    """Legacy completions logprobs; keeps tokens at or after ``start_offset`` (echoed prefix dropped)."""
    if not isinstance(logprobs, dict) or not logprobs.get("tokens"):
        return ()
    tokens = logprobs["tokens"]
    offsets = logprobs.get("text_offset") or [None] * len(tokens)
    tops = logprobs.get("top_logprobs") or [None] * len(tokens)
    stats = []
    for token, logprob, top, offset in zip(tokens, logprobs["token_logprobs"], tops, offsets, strict=True):
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
