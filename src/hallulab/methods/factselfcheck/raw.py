"""What FactSelfCheck's score step stores (:class:`hallulab.methods.raw_scores.RawScores`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hallulab.methods.raw_scores import RawScores


@dataclass
class FactSelfCheckScores(RawScores):
    """``llm_variants``: the LLM variants scored (kg, text); ``llm_records``: the records they
    scored; ``evaluator``: the evaluator role's entry; ``answers``: variant -> record -> per
    fact, the per-sample verdict (Psi); ``no_probabilities``: the same for the format-free
    P(No) reading; ``llm_calls``: Table 9's calls; ``diagnostics``: counts."""

    llm_variants: list[str]
    llm_records: list[str]
    evaluator: str | None
    answers: dict[str, dict[str, list[list[float | None]]]]
    no_probabilities: dict[str, dict[str, list[list[float | None]]]] = field(default_factory=dict)
    llm_calls: dict[str, int] = field(default_factory=dict)
    diagnostics: dict[str, int] = field(default_factory=dict)
