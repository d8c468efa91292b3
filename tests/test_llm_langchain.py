"""The langchain backend: a real LangChain chat model (langchain-openai's ChatOpenAI) against
the real llama.cpp server, prompts from LangChain templates, every call through the cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from hallulab.core.call_cache import CallCache
from hallulab.core.config import compose
from hallulab.llm import build_llm
from hallulab.llm.base import DecodingParams
from hallulab.llm.cached import CachedLLM
from hallulab.llm.prompts import load_prompt

pytestmark = [pytest.mark.server, pytest.mark.slow]


@pytest.fixture
def config(llamacpp_url: str) -> dict[str, object]:
    entry = dict(compose()["llm_catalogue"]["langchain_openai"])
    entry["chat_model"] = {**entry["chat_model"], "base_url": llamacpp_url}
    return entry


def test_a_langchain_chat_model_answers_a_rendered_prompt_with_logprobs(config: dict[str, object]) -> None:
    llm = build_llm(config, "llm_catalogue.langchain_openai")
    messages = load_prompt("selfcheck_prompt").messages(context="Paris is in France.", sentence="Paris is in France.")
    (output,) = llm.generate([messages], DecodingParams(max_new_tokens=4, top_k_alternatives=3), [None])
    assert output.text
    assert output.tokens and all(t.logprob <= 0 and len(t.top) == 3 for t in output.tokens)


def test_langchain_calls_go_through_the_call_cache(config: dict[str, object], tmp_path: Path) -> None:
    with CallCache(tmp_path / "c.sqlite") as cache:
        llm = CachedLLM(build_llm(config), cache)
        params = DecodingParams(max_new_tokens=4)
        prompts = [[{"role": "user", "content": f"Name a colour ({i})."}] for i in range(3)]
        first = llm.generate(prompts, params)
        second = llm.generate(prompts, params)
        assert first == second and cache.stats.misses == 3 and cache.stats.hits == 3
