"""SelfCheckGPT Prompt, expensive step: the evaluator's Yes / No for every (sentence, sample)."""

from __future__ import annotations

from dataclasses import fields

from hallulab.core.config import typed
from hallulab.methods.sample_matrix import scorable
from hallulab.methods.sample_scores import SampleMatrices, SampleMatrixScores
from hallulab.methods.selfcheck_prompt.knobs import SelfCheckPromptKnobs
from hallulab.methods.selfcheck_prompt.prompting import record_matrices
from hallulab.pipeline.context import BuildContext


def score(ctx: BuildContext) -> SampleMatrixScores:
    values = {f.name: ctx.params.get(f"selfcheck_prompt.{f.name}") for f in fields(SelfCheckPromptKnobs)}
    config = typed(SelfCheckPromptKnobs, values, "selfcheck_prompt")
    chosen = scorable(ctx.records)
    chosen.warn(ctx.log, "SelfCheck-Prompt")
    records = chosen.kept
    llm = ctx.resources.llm("evaluator")
    template = ctx.resources.prompt("selfcheck_prompt.prompt")
    found = record_matrices(records, llm, config, template)
    identity = {
        "llm": llm.llm.identity().as_key(),
        "evaluator": ctx.resources.llm_name("evaluator"),
        "prompt": template.name,
    }
    verdicts = found.counts.as_dict()
    ctx.log.info(
        "%s: %d replies (%d yes, %d no, %d neither -> 0.5)",
        identity["evaluator"],
        verdicts["replies"],
        verdicts["yes"],
        verdicts["no"],
        verdicts["other"],
    )
    common = {"pairs": verdicts["replies"], **chosen.diagnostics(), "verdicts": verdicts}
    stored = [SampleMatrices("selfcheck_prompt", "prompt", identity, found.verdicts, common)]
    if found.probabilities is not None:
        extra = {**common, "yes_no_not_in_top_k": found.probability_missing}
        stored.append(SampleMatrices("selfcheck_prompt", "prompt_pno", identity, found.probabilities, extra))
    return SampleMatrixScores(tuple(stored))
