"""SelfCheckGPT BERTScore, expensive step: the I x N_max matrix of 1 - max-F1 terms."""

from __future__ import annotations

from hallulab.methods.bertscore import BERTScoreKnobs, BERTScoreSupport, record_matrices
from hallulab.methods.sample_matrix import scorable
from hallulab.methods.sample_scores import SampleMatrices, SampleMatrixScores
from hallulab.pipeline.context import BuildContext


def score(ctx: BuildContext) -> SampleMatrixScores:
    chosen = scorable(ctx.records)
    chosen.warn(ctx.log, "SelfCheck-BERTScore")
    records = chosen.kept
    config = ctx.params.typed(BERTScoreKnobs, "bertscore")
    ctx.resources.spacy.require_fits(
        (p.id, f"samples[{i}]", sample) for p in records for i, sample in enumerate(p.samples)
    )
    support = BERTScoreSupport(config, ctx.resources.spacy, cache=ctx.resources.cache)
    matrices = record_matrices(records, support)
    stored = SampleMatrices(
        method="selfcheck_bertscore",
        variant="bertscore",
        identity={"name": config.name, **support.identity},
        matrices=matrices,
        diagnostics={
            "pairs": sum(m.size for m in matrices.values()),
            "samples_without_long_sentence": support.empty_samples,
            **chosen.diagnostics(),
        },
    )
    return SampleMatrixScores((stored,))
