"""Lexical Similarity's knob classes and the choices they name, kept apart from the method's code so that
declaring them (:attr:`~hallulab.pipeline.spec.MethodSpec.knobs`) imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.config import setting

METRICS = ("rouge1", "rouge2", "rougeL")


@dataclass(frozen=True)
class LexicalSimilarityKnobs:
    """params ``lexical_similarity``."""

    metrics: tuple[str, ...] = setting(
        ("rougeL", "rouge1"), choices=METRICS, scalar_ok=True, doc="ROUGE variants; lm-polygraph's default: rougeL"
    )
    use_stemmer: bool = setting(True, doc="Porter stemming of tokens longer than 3 characters (rouge-score's)")
