"""The openai backend against a real local HTTP server that misbehaves: every reply is
validated, transient failures are retried within a budget, the final error names the URL,
the model and what came back, and the replies of a half-failed batch reach the cache."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from hallulab.cache import CallCache, PartialResults
from hallulab.llm.base import DecodingParams
from hallulab.llm.cached import CachedLLM
from hallulab.llm.openai_backend import OpenAIConfig, OpenAILLM, ServerReplyError
from tests.conftest import free_port
from tests.helpers.scripted_server import Reply, ScriptedServer, chat_ok

PARAMS = DecodingParams(max_new_tokens=4)


def _llm(url: str, **changes: object) -> OpenAILLM:
    settings = {"model": "scripted", "base_url": url, "server": "llamacpp", "max_retries": 2, "timeout": 2.0}
    settings.update(changes)
    return OpenAILLM(OpenAIConfig(**settings))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("reply", "what"),
    [
        (Reply(body="<html><body>502 Bad Gateway</body></html>", content_type="text/html"), "not JSON"),
        (Reply(body='{"id": "x", "object": "chat.completion"}'), "without 'choices'"),
        (Reply(body='{"id": "x", "choices": []}'), "empty 'choices'"),
        (Reply(body='{"id": "x", "choices": [{"index": 0, "mess'), "not JSON"),
    ],
)
def test_a_malformed_200_is_retried_then_named_with_url_model_and_body(reply: Reply, what: str) -> None:
    with ScriptedServer(lambda body, i: reply) as server:
        with pytest.raises(ServerReplyError) as caught:
            _llm(server.url).generate(["hi"], PARAMS, [None])
        assert len(server.requests) == 3  # 1 + max_retries
    message = str(caught.value)
    assert server.url in message and "'scripted'" in message and what in message and "3 attempt(s)" in message


def test_transient_failures_then_success() -> None:
    script = [Reply(status=500, body='{"error": "busy"}'), Reply(body="<html>", content_type="text/html"), chat_ok()]
    with ScriptedServer(lambda body, i: script[min(i, 2)]) as server:
        (output,) = _llm(server.url).generate(["hi"], PARAMS, [None])
    assert output.text == "Hello" and len(server.requests) == 3


def test_a_hung_request_costs_at_most_the_budget() -> None:
    with ScriptedServer(lambda body, i: Reply(delay=8.0, body="{}")) as server:
        started = time.monotonic()
        with pytest.raises(ServerReplyError, match=r"APITimeoutError|timed out"):
            _llm(server.url, timeout=0.5, max_retries=10, request_budget=3.0).generate(["hi"], PARAMS, [None])
        assert time.monotonic() - started < 3.0 + 0.5 + 1.0


def test_a_client_error_is_not_retried_and_shows_the_servers_words() -> None:
    reply = Reply(status=404, body='{"error": {"message": "model scripted not found"}}')
    with ScriptedServer(lambda body, i: reply) as server:
        with pytest.raises(ServerReplyError, match=r"HTTP 404.*model scripted not found"):
            _llm(server.url).generate(["hi"], PARAMS, [None])
        assert len(server.requests) == 1


def test_a_dead_port_names_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ServerReplyError, match=rf"{url}.*is the server running"):
        _llm(url, max_retries=1).generate(["hi"], PARAMS, [None])


def test_replies_of_a_half_failed_batch_are_cached_and_a_rerun_asks_only_for_the_rest(tmp_path: Path) -> None:
    def answer(body: dict[str, object], index: int) -> Reply:
        content = str(body["messages"][-1]["content"])  # type: ignore[index]
        return Reply(status=400, body='{"error": "bad"}') if "two" in content else chat_ok(content.upper())

    prompts = ["one", "two", "three"]
    with CallCache(tmp_path / "c.sqlite") as cache:
        with ScriptedServer(answer) as server:
            llm = CachedLLM(_llm(server.url), cache)
            with pytest.raises(PartialResults, match="1 of 3 requests"):
                llm.generate(prompts, PARAMS)
        assert len(cache) == 2  # the two paid replies are kept
        with ScriptedServer(lambda body, i: chat_ok("ok")) as healed:
            outputs = CachedLLM(_llm(healed.url), cache).generate(prompts, PARAMS)
            assert len(healed.requests) == 1  # only the missing one
    assert [o.text for o in outputs] == ["ONE", "ok", "THREE"]


def test_a_server_that_stops_answering_stops_the_batch_after_one_requests_retries() -> None:
    """32 prompts at concurrency 4 against a port that accepts and drops every connection:
    the first requests spend their retries, the rest are not sent; the error names the URL."""
    accepted = 0
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.2)
    stop = threading.Event()

    def drop_everything() -> None:
        nonlocal accepted
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            accepted += 1
            connection.close()

    thread = threading.Thread(target=drop_everything, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    llm = _llm(url, max_retries=2, max_concurrency=4)
    try:
        with pytest.raises(ServerReplyError, match=rf"{url}"):
            llm.generate([f"prompt {i}" for i in range(32)], PARAMS, [None] * 32)
    finally:
        stop.set()
        thread.join()
        listener.close()
    # at most the requests already in flight spent their 3 attempts; none of the other 28 was sent
    assert accepted <= 4 * 3, accepted
