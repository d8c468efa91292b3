"""SelfCheckGPT MQAG, expensive step: questions for every sentence, answered against the
response and every stored sample (the paper's T5 / Longformer models, or the LLM substitute)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from hallulab.core.config import ConfigError, setting
from hallulab.methods.sample_matrix import scorable
from hallulab.methods.selfcheck_mqag.protocol import MQAGRoles
from hallulab.methods.selfcheck_mqag.questions import build_questions
from hallulab.methods.selfcheck_mqag.roles import ROLE_PROMPTS, HubRoles, LLMRoles
from hallulab.methods.selfcheck_mqag.scoring import StoredMQAG
from hallulab.pipeline.context import BuildContext


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


def score(ctx: BuildContext) -> StoredMQAG:
    questions = ctx.params.typed(MQAGQuestionKnobs, "selfcheck_mqag.score")
    kind = ctx.params.get("selfcheck_mqag.roles")
    roles: MQAGRoles
    if kind == "llm_substitute":
        prompts = {role: ctx.resources.prompt(f"selfcheck_mqag.prompts.{role}") for role in ROLE_PROMPTS}
        roles = LLMRoles(
            ctx.resources.llm("qa"),
            prompts,
            top_k=questions.top_k,
            question_temperature=questions.question_temperature,
        )
    elif kind == "hub":
        hub = ctx.params.typed(MQAGHubKnobs, "selfcheck_mqag.hub")
        roles = HubRoles(hub.g1, hub.g2, hub.answering, hub.answerability)
    else:
        raise ConfigError(f"selfcheck_mqag.roles: {kind!r} is not llm_substitute or hub")
    chosen = scorable(ctx.passages)
    chosen.warn(ctx.log, "SelfCheck-MQAG")
    stored = build_questions(
        chosen.kept,
        roles,
        num_questions=questions.num_questions_per_sentence,
        seed=questions.seed,
        cache=ctx.resources.cache,
    )
    ctx.log.info("MQAG (%s): %s", kind, dict(stored.diagnostics))
    return replace(stored, diagnostics={**stored.diagnostics, **chosen.diagnostics()})
