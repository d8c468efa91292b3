"""LLM backends (hf, openai, vllm) behind one interface, and the cached wrapper."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hallulab.llm.base import LLM, Capabilities, DecodingParams, Generation, LLMIdentity, TokenStats

__all__ = ["LLM", "Capabilities", "DecodingParams", "Generation", "LLMIdentity", "TokenStats", "build_llm"]


def build_llm(cfg: Mapping[str, Any]) -> LLM:
    """The backend named by ``cfg['backend']``, configured by the rest (imports lazily)."""
    backend = cfg.get("backend")
    options = {k: v for k, v in cfg.items() if k not in ("backend", "name")}
    if backend == "hf":
        from hallulab.llm.hf import HFLLM, HFConfig

        return HFLLM(HFConfig(**options))
    if backend == "openai":
        from hallulab.llm.openai_backend import OpenAIConfig, OpenAILLM

        return OpenAILLM(OpenAIConfig(**options))
    if backend == "vllm":
        from hallulab.llm.vllm_backend import VLLMLLM, VLLMConfig

        return VLLMLLM(VLLMConfig(**options))
    raise ValueError(f"llm.backend must be hf, openai or vllm; got {backend!r}")
