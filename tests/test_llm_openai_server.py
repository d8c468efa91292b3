"""The openai backend against a real OpenAI-compatible server process: llama.cpp's server
(llama-cpp-python[server], built by `make llamacpp`) serving the packaged SmolLM2 GGUF."""

from __future__ import annotations

from pathlib import Path

import pytest

from hallulab.core.call_cache import CallCache
from hallulab.llm.base import DecodingParams
from hallulab.llm.cached import CachedLLM
from hallulab.llm.openai_backend import OpenAIKnobs, OpenAILLM
from tests.conftest import free_port

pytestmark = [pytest.mark.server, pytest.mark.slow]


@pytest.fixture
def llm(llamacpp_url: str) -> OpenAILLM:
    return OpenAILLM(OpenAIKnobs(model="smollm2", base_url=llamacpp_url, server="llamacpp", max_concurrency=3))


def test_chat_generation_returns_logprobs_and_top_k(llm: OpenAILLM) -> None:
    (output,) = llm.generate(
        ["What is the capital of France?"], DecodingParams(max_new_tokens=6, top_k_alternatives=3), [None]
    )
    assert output.text
    assert 1 <= len(output.tokens) <= 6  # max_tokens honoured (llama.cpp ignores max_completion_tokens)
    assert all(t.logprob <= 0 and len(t.top) == 3 for t in output.tokens)


def test_seeded_sampling_is_reproducible(llm: OpenAILLM) -> None:
    params = DecodingParams(max_new_tokens=8, temperature=1.0)
    first = llm.generate(["Tell me a fact about cats."], params, [7])
    second = llm.generate(["Tell me a fact about cats."], params, [7])
    assert first[0].text == second[0].text


def test_concurrent_requests_keep_their_order(llm: OpenAILLM) -> None:
    prompts = [f"Count to {i}." for i in range(1, 6)]
    outputs = llm.generate(prompts, DecodingParams(max_new_tokens=4), [None] * 5)
    singles = [llm.generate([p], DecodingParams(max_new_tokens=4), [None])[0] for p in prompts]
    assert [o.text for o in outputs] == [s.text for s in singles]


def test_call_cache_serves_repeated_server_calls(llm: OpenAILLM, tmp_path: Path) -> None:
    with CallCache(tmp_path / "c.sqlite") as cache:
        cached = CachedLLM(llm, cache)
        params = DecodingParams(max_new_tokens=4)
        first = cached.generate(["Say hi."], params)
        second = cached.generate(["Say hi."], params)
        assert first == second and cache.stats.hits == 1


def test_unreachable_server_fails_after_retries() -> None:
    dead = OpenAILLM(OpenAIKnobs(model="x", base_url=f"http://127.0.0.1:{free_port()}/v1", max_retries=1, timeout=2))
    with pytest.raises(Exception, match=r"(?i)connect"):
        dead.generate(["hi"], DecodingParams(max_new_tokens=2), [None])
