"""Models and caches for the expensive steps, built lazily from the declared params.

Every model call goes through one call cache (:class:`hallulab.core.call_cache.CallCache`); a role's
LLM is the config at params ``llms.<role>`` (one catalogue, ``conf/llm/``), so
``-S llms.evaluator=openai_gpt35`` (a catalogue entry's name) swaps the evaluator of every method that uses it.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from hallulab.core.call_cache import CallCache
from hallulab.core.config import ConfigError
from hallulab.pipeline.params import ParamsView

if TYPE_CHECKING:
    from hallulab.llm.cached import CachedLLM
    from hallulab.llm.prompts import PromptTemplate
    from hallulab.text.spacy_tokens import SpacyTokenizer


class Resources:
    """Lazily built models for one step; closes the cache and the models when done."""

    def __init__(self, params: ParamsView, cache: CallCache) -> None:
        self.params = params
        self.cache = cache
        self._llms: dict[str, CachedLLM] = {}

    def llm_config(self, role: str) -> dict[str, Any]:
        """The catalogue entry that fills ``role`` (params ``llm_catalogue.<llms.<role>>``)."""
        entry = self.llm_name(role)
        if not self.params.has(f"llm_catalogue.{entry}"):
            raise ConfigError(f"llms.{role}: {entry!r} is not in llm_catalogue (conf/llm/); add it there")
        return dict(self.params.get(f"llm_catalogue.{entry}"))

    def llm(self, role: str) -> CachedLLM:
        """The cached LLM that fills ``role``."""
        if role not in self._llms:
            from hallulab.llm import build_llm
            from hallulab.llm.cached import CachedLLM

            entry = self.llm_name(role)
            backend = build_llm(self.llm_config(role), f"llm_catalogue.{entry}")
            self._llms[role] = CachedLLM(backend, self.cache, progress=f"{role} LLM ({entry})")
        return self._llms[role]

    def llm_name(self, role: str) -> str:
        """The catalogue entry's name that fills ``role``."""
        return str(self.params.get(f"llms.{role}"))

    @cached_property
    def spacy(self) -> SpacyTokenizer:
        from hallulab.text.spacy_tokens import SpacyTokenizer

        cfg = self.params.get("spacy")
        return SpacyTokenizer(str(cfg["model"]), batch_size=int(cfg["batch_size"]), cache=self.cache)

    def prompt(self, key: str) -> PromptTemplate:
        """The prompt file named by params ``key`` (``conf/prompts/<name>.yaml``)."""
        from hallulab.llm.prompts import load_prompt

        return load_prompt(str(self.params.get(key)))

    def close(self) -> None:
        for llm in self._llms.values():
            llm.llm.close()
