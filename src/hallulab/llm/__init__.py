"""LLM backends (hf, openai, vllm, langchain) behind one interface, and the cached wrapper."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hallulab.llm.base import LLM, Capabilities, DecodingParams, Generation, LLMIdentity, TokenStats

__all__ = [
    "LLM",
    "Capabilities",
    "DecodingParams",
    "Generation",
    "LLMIdentity",
    "TokenStats",
    "build_llm",
    "check_llm_roles",
    "check_llm_settings",
]


BACKENDS = ("hf", "openai", "vllm", "langchain")


def build_llm(cfg: Mapping[str, Any], where: str = "llm") -> LLM:
    """The backend named by ``cfg['backend']``, configured by the rest (imports lazily); every
    setting is checked, and an error names it as ``<where>.<setting>``."""
    from hallulab.core.config import ConfigError, typed

    backend = cfg.get("backend")
    options = {k: v for k, v in cfg.items() if k not in ("backend", "name")}
    if backend == "hf":
        from hallulab.llm.hf import HFLLM, HFKnobs

        return HFLLM(typed(HFKnobs, options, where))
    if backend == "openai":
        from hallulab.llm.openai_backend import OpenAIKnobs, OpenAILLM

        return OpenAILLM(typed(OpenAIKnobs, options, where), where)
    if backend == "vllm":
        from hallulab.llm.vllm_backend import VLLMLLM, VLLMKnobs

        return VLLMLLM(typed(VLLMKnobs, options, where))
    if backend == "langchain":
        from hallulab.llm.langchain_backend import LangChainKnobs, LangChainLLM

        return LangChainLLM(typed(LangChainKnobs, options, where))
    raise ConfigError(f"{where}.backend: must be one of {list(BACKENDS)}, got {backend!r}")


def check_llm_settings(cfg: Mapping[str, Any], where: str = "llm") -> None:
    """Check, without making the backend, what :func:`build_llm` would refuse of an ``openai``
    entry (every setting, and the ones that cannot go together: a fleet beside a
    ``base_url``, a URL listed twice), so that a run stops on it before any work."""
    if cfg.get("backend") == "openai":
        from hallulab.core.config import typed
        from hallulab.llm.openai_backend import OpenAIKnobs, check_config

        options = {k: v for k, v in cfg.items() if k not in ("backend", "name")}
        check_config(typed(OpenAIKnobs, options, where), where)


def check_llm_roles(params: Mapping[str, Any]) -> None:
    """:func:`check_llm_settings` of each catalogue entry an LLM role (params ``llms``) names."""
    catalogue = params.get("llm_catalogue") or {}
    for entry in dict.fromkeys(str(name) for name in (params.get("llms") or {}).values()):
        if entry in catalogue:
            check_llm_settings(catalogue[entry], f"llm_catalogue.{entry}")
