"""SelfCheckGPT-Prompt's knob classes and the choices they name, kept apart from the method's code so that
declaring them (:attr:`~hallulab.pipeline.spec.MethodSpec.knobs`) imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.config import setting


@dataclass(frozen=True)
class SelfCheckPromptKnobs:
    """params ``selfcheck_prompt`` (the evaluator LLM is the role ``llms.evaluator``)."""

    prompt: str = setting("selfcheck_prompt", doc="prompt file conf/prompts/<name>.yaml")
    max_new_tokens: int = setting(5, minimum=1)
    top_k: int = setting(20, minimum=0, doc="top-K log-probabilities read for P(Yes) / P(No); 0: off")
