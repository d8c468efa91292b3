"""EigValLaplacian's knob classes and the choices they name, kept apart from the method's code so that
declaring them (:attr:`~hallulab.pipeline.spec.MethodSpec.knobs`) imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.methods.graph_knobs import similarities_setting


@dataclass(frozen=True)
class EigValLaplacianKnobs:
    """params ``eig_val_laplacian``."""

    similarities: tuple[str, ...] = similarities_setting("eigv")
