"""SAR's knob classes and the choices they name, kept apart from the method's code so that
declaring them (:attr:`~hallulab.pipeline.spec.MethodSpec.knobs`) imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.config import setting

#: t, the temperature of the sentence relevance (lm-polygraph's ``SAR.t`` and ``SentenceSAR.t``)
DEFAULT_TEMPERATURE = 0.001


@dataclass(frozen=True)
class SarScoreKnobs:
    """params ``sar.score``."""

    prefix: str = setting(
        "{prompt}",
        doc="what each sample is conditioned on for its log-probabilities: '{prompt}' = the question "
        "(Semantic Entropy's setting, so its proxy calls are shared)",
    )
    token_relevance: bool = setting(
        True,
        doc="score each sample's token relevances (one similarity per token of every sample), which sar reads; "
        "off: sentence_sar and token_sar only",
    )


@dataclass(frozen=True)
class SarKnobs:
    """params ``sar.aggregate``."""

    temperature: float = setting(
        DEFAULT_TEMPERATURE,
        above=0.0,
        doc="t, the sentence relevance's temperature: E(s_j) = -log(p_j + R_S(s_j) / t) (lm-polygraph's 0.001)",
    )
