"""An LLM role served by a fleet of OpenAI-compatible endpoints (hallulab.llm.fleet): requests
spread over the replicas, an endpoint that fails is set aside and tried again later, a fleet
with no live endpoint stops at once naming each, replies are keyed by the model's declared
identity, and a generate stage survives losing a real llama.cpp server half-way."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from hallulab.core.call_cache import CallCache
from hallulab.data.schema import Record
from hallulab.generation import GenerateKnobs, generate_records
from hallulab.llm.base import DecodingParams
from hallulab.llm.cached import CachedLLM
from hallulab.llm.fleet import Endpoint, Fleet, FleetDownError
from hallulab.llm.openai_backend import OpenAIKnobs, OpenAILLM
from tests.conftest import HANG_GUARD_S, free_port, llamacpp_server, require_llamacpp
from tests.helpers.scripted_server import Reply, ScriptedServer, chat_ok

PARAMS = DecodingParams(max_new_tokens=4)


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _fleet(clock: _Clock, *urls: str) -> Fleet:
    return Fleet([Endpoint(u, client=None) for u in urls], model="m", set_aside_after=2, retry_after=30.0, clock=clock)


def test_each_request_goes_to_the_live_endpoint_with_fewest_outstanding() -> None:
    fleet = _fleet(_Clock(), "a", "b", "c")
    taken = [fleet.acquire().url for _ in range(4)]
    assert taken == ["a", "b", "c", "a"]
    fleet.succeeded(fleet.endpoints[1])  # b answered: now it has the fewest
    assert fleet.acquire().url == "b"


def test_an_endpoint_is_set_aside_after_the_stated_failures_and_tried_again_later() -> None:
    clock = _Clock()
    fleet = _fleet(clock, "a", "b")
    a, b = fleet.endpoints
    fleet.failed(fleet.acquire(), "HTTP 500")  # a's first failure: still live
    assert a.live(clock.now) and fleet.acquire() is a
    fleet.failed(a, "HTTP 500")  # its second in a row: set aside
    assert not a.live(clock.now)
    assert [fleet.acquire().url for _ in range(3)] == ["b", "b", "b"]
    clock.now += 30.0  # its time is up: tried again (b has 3 outstanding, a none)
    assert fleet.acquire() is a
    fleet.succeeded(a)  # one success clears the count
    assert a.failures == 0 and a.served == 1 and b.outstanding == 3


def test_a_request_that_failed_at_one_endpoint_goes_to_another() -> None:
    fleet = _fleet(_Clock(), "a", "b")
    a, b = fleet.endpoints
    fleet.failed(fleet.acquire(), "HTTP 500")
    assert a.outstanding == b.outstanding == 0 and fleet.acquire(avoid=a) is b
    fleet.failed(b, "HTTP 500")
    fleet.failed(fleet.acquire(), "HTTP 500")  # a set aside; b, though avoided, is all there is
    assert fleet.acquire(avoid=b) is b


def test_a_fleet_with_no_live_endpoint_names_each_in_one_line() -> None:
    clock = _Clock()
    fleet = _fleet(clock, "http://a/v1", "http://b/v1")
    a, b = fleet.endpoints
    for _ in range(2):
        fleet.acquire(), fleet.acquire()  # one request at each
        fleet.failed(a, "APIConnectionError: refused")
        fleet.failed(b, "HTTP 503: 'loading'")
    with pytest.raises(FleetDownError) as caught:
        fleet.acquire()
    message = str(caught.value)
    assert "\n" not in message and "'m'" in message
    assert "http://a/v1: APIConnectionError: refused" in message and "http://b/v1: HTTP 503" in message


def _fleet_llm(*urls: str, **changes: object) -> OpenAILLM:
    settings: dict[str, object] = {
        "model": "scripted",
        "endpoints": tuple(urls),
        "server": "llamacpp",
        "max_retries": 2,
        "timeout": 2.0,
        "max_concurrency": 2,
    }
    settings.update(changes)
    return OpenAILLM(OpenAIKnobs(**settings))  # type: ignore[arg-type]


def test_requests_of_a_failing_replica_go_to_the_others() -> None:
    with (
        ScriptedServer(lambda body, i: Reply(status=500, body='{"error": "out of memory"}')) as sick,
        ScriptedServer(lambda body, i: chat_ok(body["messages"][-1]["content"])) as well,
    ):
        llm = _fleet_llm(sick.url, well.url, retry_after=600.0)
        prompts = [f"prompt {i}" for i in range(12)]
        outputs = llm.generate(prompts, PARAMS, [None] * 12)
    assert [o.text for o in outputs] == prompts
    # set aside after its second failure in a row and never asked again: it saw at most the
    # requests already on their way when that failure came back (the pool's 4 threads)
    assert 2 <= len(sick.requests) <= 4
    assert len(well.requests) == 12
    assert "out of memory" in llm.fleet.endpoints[0].last_error


def test_a_dead_fleet_stops_in_seconds_naming_every_endpoint() -> None:
    dead = [f"http://127.0.0.1:{free_port()}/v1" for _ in range(2)]
    llm = _fleet_llm(*dead, max_retries=5, request_budget=120.0)
    started = time.monotonic()
    with pytest.raises(FleetDownError) as caught:
        llm.generate([f"p{i}" for i in range(20)], PARAMS, [None] * 20)
    # a refused connection fails at once: the bound is loose, far under one request's budget
    assert time.monotonic() - started < 30.0
    message = str(caught.value)
    assert all(url in message for url in dead) and "Connection" in message and "\n" not in message


def test_a_fleet_keys_replies_by_the_model_it_declares_and_one_endpoint_by_its_url() -> None:
    one = OpenAILLM(OpenAIKnobs(model="m", base_url="http://10.0.0.1:8000/v1", revision="r1"))
    fleet = OpenAILLM(OpenAIKnobs(model="m", endpoints=("http://10.0.0.1:8000/v1", "http://10.0.0.2:8000/v1")))
    other_fleet = OpenAILLM(OpenAIKnobs(model="m", endpoints=("http://10.0.0.3:8000/v1",)))
    assert one.identity().extra["endpoint"] == "http://10.0.0.1:8000/v1"  # the single endpoint's key, as before
    assert "endpoint" not in fleet.identity().extra
    assert fleet.identity().as_key() == other_fleet.identity().as_key()  # any replica's reply serves
    pinned = OpenAILLM(OpenAIKnobs(model="m", revision="r2", endpoints=("http://10.0.0.1:8000/v1",)))
    assert pinned.identity().as_key() != fleet.identity().as_key()  # the revision is part of it


def test_a_fleet_and_a_base_url_together_are_refused() -> None:
    with pytest.raises(ValueError, match=r"replaces llm\.base_url"):
        OpenAILLM(OpenAIKnobs(model="m", base_url="http://a/v1", endpoints=("http://b/v1",)))
    with pytest.raises(ValueError, match="twice"):
        OpenAILLM(OpenAIKnobs(model="m", endpoints=("http://b/v1", "http://b/v1")))


@pytest.mark.server
@pytest.mark.slow
def test_a_generate_stage_survives_losing_a_replica_and_matches_a_one_server_run(
    toy_passages: list[Record], tmp_path: Path
) -> None:
    """Two llama.cpp servers of one GGUF; the second is killed once it has answered two
    requests. The stage's work (generate_records, as stages/generate.py calls it) completes on
    the first, each reply is cached once, and the samples equal a one-server run's (seeded)."""
    require_llamacpp()
    records = [p for p in toy_passages if p.prompt][:4]
    cfg = GenerateKnobs(mode="samples", samples_to_draw=3, max_new_tokens=16, seed=11)
    total = len(records) * cfg.samples_to_draw

    def one_sentence_each(texts: list[str]) -> list[list[str]]:
        return [[t] for t in texts]

    # llama.cpp re-uses the key-value cache of the prompt it served last and evaluates only the
    # rest, in one batch whose size changes the float sums: a reply would depend on which request
    # the server served before. One token per evaluation makes a seeded reply that request's alone.
    alike = ("--n_batch", "1", "--n_ubatch", "1")
    with (
        llamacpp_server(tmp_path, *alike) as (_, first_url),
        llamacpp_server(tmp_path, *alike) as (second, second_url),
    ):
        config = OpenAIKnobs(model="smollm2", endpoints=(first_url, second_url), server="llamacpp", max_concurrency=2)
        backend = OpenAILLM(config)
        victim = backend.fleet.endpoints[1]

        def kill_after_two_replies() -> None:
            deadline = time.monotonic() + HANG_GUARD_S
            while victim.served < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            second.kill()

        killer = threading.Thread(target=kill_after_two_replies, daemon=True)
        killer.start()
        with CallCache(tmp_path / "fleet.sqlite") as cache:
            fleet_run, _, report = generate_records(records, CachedLLM(backend, cache), cfg, one_sentence_each)
            assert len(cache) == total and cache.stats.misses == total  # each reply cached once
        killer.join(timeout=HANG_GUARD_S)
        assert second.poll() is not None, "the second server was never killed"
        assert report.samples_generated == total
        assert 2 <= victim.served < total and backend.fleet.endpoints[0].served == total - victim.served
        assert "Connection" in victim.last_error

        alone = OpenAILLM(OpenAIKnobs(model="smollm2", base_url=first_url, server="llamacpp", max_concurrency=2))
        with CallCache(tmp_path / "one.sqlite") as cache:
            single_run, _, _ = generate_records(records, CachedLLM(alone, cache), cfg, one_sentence_each)
    assert [p.samples for p in fleet_run] == [p.samples for p in single_run]
    assert all(len(p.samples) == cfg.samples_to_draw for p in fleet_run)
