"""SelfCheckGPT NLI, expensive step: P(contradict | sentence, sample) for every sentence and
every stored sample, all pairs of the data set in one batched, cached request."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hallulab.data.schema import Record
from hallulab.methods.sample_matrix import scorable
from hallulab.methods.sample_scores import SampleMatrices, SampleMatrixScores, sentence_sample_grid, unflatten
from hallulab.nli.scorer import NLIKnobs, NLIScorer
from hallulab.pipeline.context import BuildContext


def record_matrices(records: Sequence[Record], scorer: NLIScorer, *, progress: bool = False) -> dict[str, np.ndarray]:
    """Every passage's I x N_max matrix of P(contradict), all pairs in one batched request."""
    sentences, samples = sentence_sample_grid(records, "SelfCheck-NLI")
    return unflatten(records, scorer.pair_probs(sentences, samples, progress=progress))


def score(ctx: BuildContext) -> SampleMatrixScores:
    chosen = scorable(ctx.records)
    chosen.warn(ctx.log, "SelfCheck-NLI")
    records = chosen.kept
    scorer = NLIScorer(ctx.params.typed(NLIKnobs, "nli"), cache=ctx.resources.cache)
    matrices = record_matrices(records, scorer, progress=True)
    sentences, samples = sentence_sample_grid(records, "SelfCheck-NLI")
    ordered = (sentences, samples) if scorer.config.pair_order == "sentence_first" else (samples, sentences)
    stored = SampleMatrices(
        method="selfcheck_nli",
        variant="nli",
        identity={"name": scorer.config.name, **scorer.identity},
        matrices=matrices,
        diagnostics={
            "pairs": sum(m.size for m in matrices.values()),
            **chosen.diagnostics(),
            "pairs_truncated_for_nli": scorer.truncated_pairs(*ordered),
        },
    )
    return SampleMatrixScores((stored,))
