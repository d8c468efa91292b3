"""FactSelfCheck's knob classes and the choices they name, kept apart from the method's code so that
declaring them (:attr:`~hallulab.pipeline.spec.MethodSpec.knobs`) imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.config import setting

LLM_VARIANTS = ("kg", "text")
AGGREGATIONS = ("max", "mean")


@dataclass(frozen=True)
class FactSelfCheckScoreKnobs:
    """params ``factselfcheck.score``."""

    llm_variants: tuple[str, ...] = setting(
        LLM_VARIANTS, choices=LLM_VARIANTS, scalar_ok=True, empty_ok=True, doc="[]: KG-frequency and RandomFact only"
    )
    llm_records: int | None = setting(
        None, minimum=0, doc="ask the LLM on the first N records only (null: all); the same subset for both variants"
    )
    max_new_tokens: int = setting(4, minimum=1)
    top_k: int = setting(
        20, minimum=0, doc="top-K log-probabilities of the first reply token read for P(No) (white-box LLMs); 0: off"
    )


@dataclass(frozen=True)
class FactSelfCheckKnobs:
    """params ``factselfcheck.aggregate`` (N and the choice of samples come from ``samples``:
    :func:`sample_choice_from`)."""

    aggregations: tuple[str, ...] = setting(AGGREGATIONS, choices=AGGREGATIONS, scalar_ok=True)
    random_seed: int = 0
