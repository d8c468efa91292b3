"""Every LLM call goes through the content-addressed call cache.

Key: ("llm.generate" | "llm.score" | "llm.constrained", model identity (backend, model id, revision or
weights hash, dtype...), decoding parameters, seed (None when greedy), input). A hit is
free; a killed run resumes from the last committed batch; DVC queue workers share hits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hallulab.core.call_cache import CallCache, PartialResults, cache_key
from hallulab.llm.base import LLM, ConstrainedParams, ConstrainedResult, DecodingParams, Generation, Prompt, TokenStats


class CachedLLM:
    """Wraps an :class:`LLM`; same ``generate`` / ``score`` signatures, cached."""

    def __init__(self, llm: LLM, cache: CallCache, *, batch_size: int = 32, progress: str | None = None) -> None:
        self.llm = llm
        self.cache = cache
        self.batch_size = batch_size
        self.progress = progress

    def _map(self, keys: list[str], inputs: list[Any], compute: Any) -> list[Any]:
        return self.cache.map(keys, inputs, compute, batch_size=self.batch_size, progress=self.progress, spread=True)

    @property
    def capabilities(self) -> Any:
        return self.llm.capabilities

    def generate(
        self, prompts: Sequence[Prompt], params: DecodingParams, seeds: Sequence[int | None] | None = None
    ) -> list[Generation]:
        seeds = list(seeds) if seeds is not None else [None] * len(prompts)
        identity = self.llm.identity().as_key()
        keys = [
            cache_key("llm.generate", identity, params.as_key(), None if params.greedy else seed, prompt)
            for prompt, seed in zip(prompts, seeds, strict=True)
        ]

        def compute(items: list[tuple[Prompt, int | None]]) -> list[dict[str, Any]]:
            try:
                outputs = self.llm.generate([p for p, _ in items], params, [s for _, s in items])
            except PartialResults as partial:  # keep every reply that arrived
                converted = {i: g.to_dict() for i, g in partial.results.items()}
                raise PartialResults(converted, partial.errors, str(partial)) from partial
            return [g.to_dict() for g in outputs]

        values = self._map(keys, list(zip(prompts, seeds, strict=True)), compute)
        return [Generation.from_dict(v) for v in values]

    def score(self, prefixes: Sequence[Prompt], continuations: Sequence[str], top_k: int = 0) -> list[list[TokenStats]]:
        identity = self.llm.identity().as_key()
        keys = [
            cache_key("llm.score", identity, _score_key(top_k), prefix, continuation)
            for prefix, continuation in zip(prefixes, continuations, strict=True)
        ]

        def compute(items: list[tuple[Prompt, str]]) -> list[list[dict[str, Any]]]:
            try:
                outputs = self.llm.score([p for p, _ in items], [c for _, c in items], top_k)
            except PartialResults as partial:  # keep every scored row that arrived, as generate does
                converted = {i: [t.to_dict() for t in row] for i, row in partial.results.items()}
                raise PartialResults(converted, partial.errors, str(partial)) from partial
            return [[t.to_dict() for t in row] for row in outputs]

        values = self._map(keys, list(zip(prefixes, continuations, strict=True)), compute)
        return [[TokenStats.from_dict(t) for t in row] for row in values]

    def constrained_search(
        self,
        prompts: Sequence[Prompt],
        constraints: Sequence[Sequence[str]],
        params: ConstrainedParams,
        length_texts: Sequence[str | None] | None = None,
    ) -> list[ConstrainedResult]:
        identity = self.llm.identity().as_key()
        lengths: list[str | None] = list(length_texts) if length_texts is not None else [None] * len(prompts)
        keys = [
            cache_key(
                "llm.constrained", identity, params.as_key(), prompt, list(strings), *([] if text is None else [text])
            )
            for prompt, strings, text in zip(prompts, constraints, lengths, strict=True)
        ]

        def compute(items: list[tuple[Prompt, Sequence[str], str | None]]) -> list[dict[str, Any]]:
            texts = [t for _, _, t in items]
            outputs = self.llm.constrained_search(
                [p for p, _, _ in items],
                [c for _, c, _ in items],
                params,
                None if texts == [None] * len(texts) else texts,
            )
            return [o.to_dict() for o in outputs]

        values = self._map(keys, list(zip(prompts, constraints, lengths, strict=True)), compute)
        return [ConstrainedResult.from_dict(v) for v in values]


def _score_key(top_k: int) -> dict[str, Any]:
    """A teacher-forced call's settings in its cache key. With alternatives, the key says they
    carry their vocabulary ids (``top_ids``): a stored result from before the ids were kept
    would otherwise come back without them, and CCP would match the written token by text."""
    return {"top_k": top_k, "top_ids": True} if top_k else {"top_k": top_k}
