"""LUQ's knob classes and the choices they name, kept apart from the method's code so that
declaring them (:attr:`~hallulab.pipeline.spec.MethodSpec.knobs`) imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.config import setting

READINGS = ("sentence", "response")


@dataclass(frozen=True)
class LUQKnobs:
    """params ``luq``."""

    readings: tuple[str, ...] = setting(
        READINGS,
        choices=READINGS,
        scalar_ok=True,
        doc="sentence: the paper's, each sentence against the samples (luq_sentence); "
        "response: lm-polygraph's, the samples against each other (luq_response)",
    )
