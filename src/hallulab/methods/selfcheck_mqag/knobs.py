"""SelfCheckGPT-MQAG's knob classes and the choices they name, kept apart from the method's code so that
declaring them (:attr:`~hallulab.pipeline.spec.MethodSpec.knobs`) imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.config import setting

SCORINGS = ("counting", "bayes", "bayes_with_alpha")


@dataclass(frozen=True)
class MQAGScoringKnobs:
    """``selfcheck_mqag.aggregate`` knobs (read by the cheap aggregate stage)."""

    methods: tuple[str, ...] = setting(SCORINGS, choices=SCORINGS, scalar_ok=True)
    beta1: float = setting(0.8, above=0.0, maximum=0.999999)
    beta2: float = setting(0.8, above=0.0, maximum=0.999999)
    answerability_threshold: float = setting(0.5, minimum=0.0, maximum=1.0, doc="AT (counting, bayes)")


@dataclass(frozen=True)
class MQAGQuestionKnobs:
    """params ``selfcheck_mqag.score`` (read by the expensive step)."""

    num_questions_per_sentence: int = setting(5, minimum=1, doc="paper: 5")
    question_temperature: float = setting(1.0, above=0.0, doc="G1 samples its questions")
    top_k: int = setting(20, minimum=1, doc="top-K log-probabilities read for the A / U answers")
    seed: int = 0


@dataclass(frozen=True)
class MQAGHubKnobs:
    """params ``selfcheck_mqag.hub``: the paper's models by hub id."""

    g1: str = "potsawee/t5-large-generation-squad-QuestionAnswer"
    g2: str = "potsawee/t5-large-generation-race-Distractor"
    answering: str = "potsawee/longformer-large-4096-answering-race"
    answerability: str = "potsawee/longformer-large-4096-answerable-squad2"
