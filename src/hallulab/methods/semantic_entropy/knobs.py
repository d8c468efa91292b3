"""Semantic Entropy's knob classes and the choices they name, kept apart from the method's code so that
declaring them (:attr:`~hallulab.pipeline.spec.MethodSpec.knobs`) imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.config import setting

#: what the score step scores: only the pairs the clusterings read (every prefix of the
#: samples), or every ordered pair (any choice of samples)
LAZY, ALL_PAIRS = "lazy", "all"
PAIR_MODES = (LAZY, ALL_PAIRS)
NLI_INPUTS = ("answer", "question_answer")
CLASS_PROBABILITIES = ("sum", "frequency")
ENTROPY_ESTIMATIONS = ("mean", "direct")


@dataclass(frozen=True)
class SemanticEntropyScoreKnobs:
    """params ``semantic_entropy.score``."""

    prefix: str = setting(
        "{prompt}", doc="what each sample is conditioned on for its log-probability: '{prompt}' = the question"
    )
    nli_input: str = setting(
        "answer",
        choices=NLI_INPUTS,
        doc="answer: the sample alone (lm-polygraph); question_answer: the question before each (Kuhn et al.'s code)",
    )
    farquhar: bool = setting(
        True, doc="also classify the question-conditioned pairs, for Farquhar et al.'s reading (se_farquhar)"
    )
    pairs: str = setting(
        LAZY,
        choices=PAIR_MODES,
        doc="lazy: only the pairs the semantic classes read, for any samples.used with samples.selection=first; "
        "all: every ordered pair, for samples.selection=random too",
    )


@dataclass(frozen=True)
class SemanticEntropyKnobs:
    """params ``semantic_entropy.aggregate``."""

    class_probability: tuple[str, ...] = setting(
        CLASS_PROBABILITIES,
        choices=CLASS_PROBABILITIES,
        scalar_ok=True,
        doc="sum: logsumexp of the samples' summed log-probabilities; frequency: n_c / N (Farquhar et al.'s discrete)",
    )
    entropy_estimation: str = setting(
        "mean",
        choices=ENTROPY_ESTIMATIONS,
        doc="mean: lm-polygraph's per-sample Monte-Carlo mean (its default); direct: its other estimator",
    )
