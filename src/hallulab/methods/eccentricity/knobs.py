"""Eccentricity's knob classes and the choices they name, kept apart from the method's code so that
declaring them (:attr:`~hallulab.pipeline.spec.MethodSpec.knobs`) imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.config import setting
from hallulab.methods.graph_knobs import similarities_setting


@dataclass(frozen=True)
class EccentricityKnobs:
    """params ``eccentricity``."""

    similarities: tuple[str, ...] = similarities_setting("ecc")
    threshold: float = setting(
        0.9, above=0.0, maximum=2.0, doc="the eigenvectors kept: eigenvalue below it (lm-polygraph 0.7.0's thres)"
    )
