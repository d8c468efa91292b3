"""SelfCheckGPT MQAG, expensive step: questions for every sentence, answered against the
response and every stored sample (the paper's T5 / Longformer models, or the LLM substitute)."""

from __future__ import annotations

from dataclasses import replace

from hallulab.core.config import ConfigError
from hallulab.methods.sample_matrix import scorable
from hallulab.methods.selfcheck_mqag.knobs import MQAGHubKnobs, MQAGQuestionKnobs
from hallulab.methods.selfcheck_mqag.protocol import MQAGRoles
from hallulab.methods.selfcheck_mqag.questions import build_questions
from hallulab.methods.selfcheck_mqag.raw import StoredMQAG
from hallulab.methods.selfcheck_mqag.roles import ROLE_PROMPTS, HubRoles, LLMRoles
from hallulab.pipeline.context import BuildContext


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
    chosen = scorable(ctx.records)
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
