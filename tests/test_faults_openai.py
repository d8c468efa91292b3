"""The openai backend against a real local HTTP server that misbehaves: every reply is
validated, transient failures are retried within a budget, the final error names the URL,
the model and what came back, and the replies of a half-failed batch reach the cache."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import pytest

from hallulab.core.call_cache import CallCache, PartialResults
from hallulab.core.errors import UserFacingError
from hallulab.llm.base import DecodingParams, require_token_stats
from hallulab.llm.cached import CachedLLM
from hallulab.llm.openai_backend import OpenAIKnobs, OpenAILLM, ServerReplyError
from tests.conftest import free_port
from tests.helpers.scripted_server import MAX_DELAY, Reply, ScriptedServer, chat_ok

PARAMS = DecodingParams(max_new_tokens=4)


def _llm(url: str, **changes: object) -> OpenAILLM:
    settings = {"model": "scripted", "base_url": url, "server": "llamacpp", "max_retries": 2, "timeout": 2.0}
    settings.update(changes)
    return OpenAILLM(OpenAIKnobs(**settings))  # type: ignore[arg-type]


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
    """Ten retries of a 0.5 s timeout against a server that answers only after MAX_DELAY: the
    3 s request budget, not the server's late reply, ends the call. The bound checked is the
    server's delay (a wide margin over the budget), not a time measured on one machine."""
    with ScriptedServer(lambda body, i: Reply(delay=MAX_DELAY, body="{}")) as server:
        started = time.monotonic()
        with pytest.raises(ServerReplyError, match=r"APITimeoutError|timed out"):
            _llm(server.url, timeout=0.5, max_retries=10, request_budget=3.0).generate(["hi"], PARAMS, [None])
        assert time.monotonic() - started < MAX_DELAY
        assert len(server.requests) < 11  # the budget stopped the retries before all ten ran


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
    healed = False

    def answer(body: dict[str, object], index: int) -> Reply:
        content = str(body["messages"][-1]["content"])  # type: ignore[index]
        if healed:
            return chat_ok("ok")
        return Reply(status=400, body='{"error": "bad"}') if "two" in content else chat_ok(content.upper())

    prompts = ["one", "two", "three"]
    with CallCache(tmp_path / "c.sqlite") as cache, ScriptedServer(answer) as server:
        llm = CachedLLM(_llm(server.url), cache)
        with pytest.raises(PartialResults, match="1 of 3 requests"):
            llm.generate(prompts, PARAMS)
        assert len(cache) == 2  # the two paid replies are kept
        healed = True  # the same endpoint, working again (the cache keys replies by endpoint)
        outputs = CachedLLM(_llm(server.url), cache).generate(prompts, PARAMS)
        assert len(server.requests) == 4  # 3, then only the missing one
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


def _with_logprobs(text: str, content: object) -> Reply:
    payload = json.loads(chat_ok(text).body)
    payload["choices"][0]["logprobs"] = content
    return Reply(body=json.dumps(payload))


@pytest.mark.parametrize(
    "logprobs",
    [
        None,  # the server omits them
        {"content": [{"token": "Paris", "logprob": None, "top_logprobs": []}]},  # "logprob": null
        {"content": [{"token": "Paris", "logprob": -0.1, "top_logprobs": []}]},  # no top-K although asked
    ],
    ids=["omitted", "null", "no-top-k"],
)
def test_a_method_that_reads_probabilities_says_when_the_server_sent_none(logprobs: object) -> None:
    """HalluCheck's KS test and CCP's P(True) read the top-K of each step: replies without them
    stop the step with one error naming the role, instead of every fact passing (or failing)."""
    with ScriptedServer(lambda body, i: _with_logprobs("Paris", logprobs)) as server:
        replies = _llm(server.url).generate(["Capital of France?"], DecodingParams(4, top_k_alternatives=5), [None])
    with pytest.raises(UserFacingError, match=r"llms.generator: 1 of 1 replies came without top-5 log-probabilities"):
        require_token_stats(replies, "generator", "HalluCheck's probability check", 5)


def test_placeholder_log_probabilities_are_named_not_read_as_guesses() -> None:
    """A server that fills top_logprobs with one value for every alternative would make every
    step of every reply look flat (every fact "guessed"): named instead."""
    flat = [{"token": t, "logprob": 0.0} for t in ("Paris", "Lyon", "Nice")]
    content = {"content": [{"token": "Paris", "logprob": 0.0, "top_logprobs": flat}] * 2}
    with ScriptedServer(lambda body, i: _with_logprobs("Paris Paris", content)) as server:
        replies = _llm(server.url).generate(["Capital of France?"], DecodingParams(4, top_k_alternatives=3), [None])
    with pytest.raises(UserFacingError, match=r"llms.generator: every reply came with placeholder top-3"):
        require_token_stats(replies, "generator", "HalluCheck's probability check", 3)


def test_null_logprobs_are_no_probabilities_not_a_type_error() -> None:
    content = {"content": [{"token": "Pa", "logprob": None}, {"token": "ris", "logprob": -0.2}]}
    with ScriptedServer(lambda body, i: _with_logprobs("Paris", content)) as server:
        (reply,) = _llm(server.url).generate(["hi"], PARAMS, [None])
    assert reply.text == "Paris" and reply.tokens == ()


def test_teacher_forcing_without_prompt_logprobs_is_an_error_naming_the_server() -> None:
    completion = {"id": "c", "choices": [{"index": 0, "text": "x", "logprobs": None, "finish_reason": "length"}]}
    with ScriptedServer(lambda body, i: Reply(body=json.dumps(completion))) as server:
        llm = _llm(server.url, server="vllm")
        with pytest.raises(ServerReplyError, match=rf"{server.url}.*no prompt log-probabilities"):
            llm.score(["Q: capital?"], [" Paris"])


def test_a_half_failed_teacher_forcing_batch_keeps_what_arrived(tmp_path: Path) -> None:
    """Teacher forcing (echo) once lost the whole batch when some requests failed; the rows
    that arrived are cached and a re-run asks only for the rest, as generation does."""

    def answer(body: dict[str, object], index: int) -> Reply:
        prompt = str(body["prompt"])
        if "two" in prompt:
            return Reply(status=400, body='{"error": "bad"}')
        start = len(prompt) - len(prompt.split(" ")[-1])
        logprobs = {
            "tokens": [prompt[start:]],
            "token_logprobs": [-0.5],
            "top_logprobs": [None],
            "text_offset": [start],
        }
        return Reply(body=json.dumps({"id": "c", "choices": [{"index": 0, "text": "", "logprobs": logprobs}]}))

    with CallCache(tmp_path / "c.sqlite") as cache:
        with ScriptedServer(answer) as server:
            llm = CachedLLM(_llm(server.url, server="vllm"), cache)
            with pytest.raises(PartialResults, match="1 of 3"):
                llm.score(["Q:", "Q:", "Q:"], [" one", " two", " three"])
        assert len(cache) == 2


def test_two_endpoints_serving_one_model_name_never_share_cached_replies(tmp_path: Path) -> None:
    server_a = ScriptedServer(lambda body, i: chat_ok("from A"))
    server_b = ScriptedServer(lambda body, i: chat_ok("from B"))
    with CallCache(tmp_path / "c.sqlite") as cache, server_a as a, server_b as b:
        first = CachedLLM(_llm(a.url), cache).generate(["hi"], PARAMS)
        second = CachedLLM(_llm(b.url), cache).generate(["hi"], PARAMS)
        again = CachedLLM(_llm(a.url), cache).generate(["hi"], PARAMS)
        assert [first[0].text, second[0].text, again[0].text] == ["from A", "from B", "from A"]
        assert len(b.requests) == 1 and len(a.requests) == 1  # the second ask of A came from the cache
