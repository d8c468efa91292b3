"""The ``vllm`` backend: vLLM's in-process engine on a GPU machine (``pip install '.[vllm]'``).

It mirrors the ``hf`` semantics where vLLM allows: per-request seeds
(``SamplingParams.seed``), the chosen token's log-probability and the top-K alternatives
(``logprobs=K``), teacher forcing through ``prompt_logprobs``. vLLM returns no full-vocabulary
distribution, so :attr:`TokenStats.entropy` is None (methods that need it say so).
vLLM cannot be installed on CPU-only machines; for serving, prefer ``vllm serve`` with the
``openai`` backend (``server: vllm``), which is tested here against a real server.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from hallulab.llm.base import (
    LLM,
    Capabilities,
    DecodingParams,
    Generation,
    LLMIdentity,
    Prompt,
    TokenStats,
    prompt_text,
)


@dataclass(frozen=True)
class VLLMKnobs:
    model_id: str = ""
    revision: str | None = None
    dtype: str = "auto"
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float = 0.85
    max_model_len: int | None = None
    chat_template: bool = True


class VLLMLLM(LLM):
    def __init__(self, config: VLLMKnobs) -> None:
        self.config = config
        self.capabilities = Capabilities(
            token_logprobs=True, full_entropy=False, top_k_alternatives=True, teacher_forcing=True, chat=True
        )

    def identity(self) -> LLMIdentity:
        return LLMIdentity(
            backend="vllm",
            model=self.config.model_id,
            revision=self.config.revision or "",
            extra={"dtype": self.config.dtype, "chat_template": self.config.chat_template},
        )

    @cached_property
    def engine(self) -> Any:
        try:
            import vllm
        except ImportError as error:
            raise RuntimeError("the vllm backend needs a CUDA machine and `pip install '.[vllm]'`") from error
        return vllm.LLM(
            model=self.config.model_id,
            revision=self.config.revision,
            dtype=self.config.dtype,
            tensor_parallel_size=self.config.tensor_parallel_size,
            gpu_memory_utilization=self.config.gpu_memory_utilization,
            max_model_len=self.config.max_model_len,
        )

    def _render(self, prompt: Prompt) -> str:
        if not self.config.chat_template:
            return prompt_text(prompt)
        tokenizer = self.engine.get_tokenizer()
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
        return str(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))

    def generate(
        self, prompts: Sequence[Prompt], params: DecodingParams, seeds: Sequence[int | None]
    ) -> list[Generation]:
        import vllm

        sampling = [
            vllm.SamplingParams(
                temperature=params.temperature,
                top_p=params.top_p,
                max_tokens=params.max_new_tokens,
                seed=None if params.greedy else seed,
                logprobs=max(params.top_k_alternatives, 1),
                stop=list(params.stop) or None,
            )
            for seed in seeds
        ]
        outputs = self.engine.generate([self._render(p) for p in prompts], sampling, use_tqdm=False)
        results = []
        for output in outputs:
            completion = output.outputs[0]
            stats = []
            for token_id, candidates in zip(completion.token_ids, completion.logprobs or [], strict=False):
                chosen = candidates[token_id]
                ranked = sorted(candidates.items(), key=lambda item: item[1].rank)[: params.top_k_alternatives]
                stats.append(
                    TokenStats(
                        token=chosen.decoded_token,
                        logprob=float(chosen.logprob),
                        token_id=token_id,
                        top=tuple((c.decoded_token, float(c.logprob)) for _, c in ranked),
                        top_ids=tuple(int(i) for i, _ in ranked),
                    )
                )
            results.append(
                Generation(text=completion.text, tokens=tuple(stats), finish_reason=completion.finish_reason or "")
            )
        return results

    def score(self, prefixes: Sequence[Prompt], continuations: Sequence[str], top_k: int = 0) -> list[list[TokenStats]]:
        import vllm

        tokenizer = self.engine.get_tokenizer()
        params = vllm.SamplingParams(max_tokens=1, prompt_logprobs=max(top_k, 1), temperature=0.0)
        prompts, boundaries = [], []
        for prefix, continuation in zip(prefixes, continuations, strict=True):
            prefix_ids = tokenizer(self._render(prefix) if prefix else "", add_special_tokens=True)["input_ids"]
            cont_ids = tokenizer(continuation, add_special_tokens=False)["input_ids"]
            prompts.append({"prompt_token_ids": prefix_ids + cont_ids})
            boundaries.append(len(prefix_ids))
        outputs = self.engine.generate(prompts, params, use_tqdm=False)
        results = []
        for output, boundary in zip(outputs, boundaries, strict=True):
            ids = output.prompt_token_ids
            stats = []
            for position in range(boundary, len(ids)):
                candidates = output.prompt_logprobs[position]
                chosen = candidates[ids[position]]
                ranked = sorted(candidates.items(), key=lambda item: item[1].rank)[:top_k]
                stats.append(
                    TokenStats(
                        token=chosen.decoded_token,
                        logprob=float(chosen.logprob),
                        token_id=ids[position],
                        top=tuple((c.decoded_token, float(c.logprob)) for _, c in ranked),
                        top_ids=tuple(int(i) for i, _ in ranked),
                    )
                )
            results.append(stats)
        return results
