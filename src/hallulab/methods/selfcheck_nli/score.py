"""SelfCheckGPT NLI, expensive step: P(contradict | sentence, sample) for every sentence and
every stored sample, all pairs of the data set in one batched, cached request."""

from __future__ import annotations

from typing import Any

from hallulab.methods.sample_matrix import SampleMatrices, scorable, sentence_sample_grid, unflatten
from hallulab.nli.scorer import NLIConfig, NLIScorer
from hallulab.pipeline.context import BuildContext


def score(ctx: BuildContext) -> dict[str, Any]:
    passages, skipped = scorable(ctx.passages)
    scorer = NLIScorer(ctx.params.typed(NLIConfig, "nli"), cache=ctx.resources.cache)
    sentences, samples = sentence_sample_grid(passages, "SelfCheck-NLI")
    matrices = unflatten(passages, scorer.pair_probs(sentences, samples, progress=True))
    stored = SampleMatrices(
        method="selfcheck_nli",
        variant="nli",
        identity={"name": scorer.config.name, **scorer.identity},
        matrices=matrices,
        diagnostics={"pairs": len(sentences), "skipped_records": skipped},
    )
    return stored.to_dict()
