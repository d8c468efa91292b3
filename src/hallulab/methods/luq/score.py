"""LUQ, expensive step of the sentence reading: 1 - S(s_i, r_n) = P(contradict | premise sample r_n,
hypothesis sentence s_i) for every sentence of the response and every stored sample, all pairs of
the data set in one batched, cached NLI request.

The sample is the premise whatever ``nli.pair_order`` says: LUQ asks whether each sentence is
supported by a sample. The pairs go through the same cached P(contradict) as SelfCheckGPT-NLI's
score step, so with ``nli.pair_order=sample_first`` every pair is one that step has already
scored (and the two methods' sentence scores are the same numbers); with the default
``sentence_first`` SelfCheckGPT-NLI reads the pairs the other way round and LUQ scores its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from hallulab.data.schema import Record
from hallulab.methods.luq.formula import VARIANT
from hallulab.methods.sample_matrix import scorable
from hallulab.methods.sample_scores import SampleMatrices, SampleMatrixScores, sentence_sample_grid, unflatten
from hallulab.nli.scorer import NLIKnobs, NLIScorer
from hallulab.pipeline.context import BuildContext

#: premises, hypotheses -> P(contradict) of each pair (SelfCheckGPT's Eq. 9 normalisation)
Contradiction = Callable[[list[str], list[str]], np.ndarray]


def sentence_matrices(records: Sequence[Record], contradiction: Contradiction) -> dict[str, np.ndarray]:
    """Every record's I x N_max matrix of 1 - S(s_i, r_n), the sample r_n the premise."""
    sentences, samples = sentence_sample_grid(records, "LUQ")
    return unflatten(records, contradiction(samples, sentences))


def score(ctx: BuildContext) -> SampleMatrixScores:
    chosen = scorable(ctx.records)
    chosen.warn(ctx.log, "LUQ")
    records = chosen.kept
    scorer = NLIScorer(ctx.params.typed(NLIKnobs, "nli"), cache=ctx.resources.cache)
    matrices = sentence_matrices(records, lambda p, h: scorer.contradiction_probs(p, h, progress=True))
    sentences, samples = sentence_sample_grid(records, "LUQ")
    stored = SampleMatrices(
        method="luq",
        variant=VARIANT,
        identity={"name": scorer.config.name, **scorer.identity, "premise": "sample"},
        matrices=matrices,
        diagnostics={
            "pairs": sum(m.size for m in matrices.values()),
            **chosen.diagnostics(),
            "pairs_truncated_for_nli": scorer.truncated_pairs(samples, sentences),
        },
    )
    return SampleMatrixScores((stored,))
