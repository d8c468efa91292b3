"""SelfCheckGPT n-gram's knob classes and the choices they name, kept apart from the method's code so that
declaring them (:attr:`~hallulab.pipeline.spec.MethodSpec.knobs`) imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.config import setting

AGGREGATIONS = ("avg", "max")


@dataclass(frozen=True)
class NgramKnobs:
    """The sweep knobs of ``selfcheck_ngram`` (N and the choice of samples come from
    ``selfcheck``, read once for every method: :func:`sample_choice_from`)."""

    n: tuple[int, ...] = setting((1, 2, 3, 4, 5), minimum=1, scalar_ok=True, doc="n-gram order(s); Table 7: 1..5")
    aggregations: tuple[str, ...] = setting(AGGREGATIONS, choices=AGGREGATIONS, scalar_ok=True)
    lowercase: bool = True
    smoothing_k: float = setting(0, minimum=0.0, doc="add-k smoothing; the paper and selfcheckgpt 0.1.7 use 0 (none)")
