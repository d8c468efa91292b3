"""Build the NLI pair-matrix artifact: every ordered pair of each record's samples, the diagonal
included, in one batched request through the cached NLI scorer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hallulab.artifacts.nli_pair_matrix import PairMatrix
from hallulab.data.schema import Record
from hallulab.nli.scorer import NLIKnobs, NLIScorer
from hallulab.pipeline.context import BuildContext

ENTAILMENT, NEUTRAL, CONTRADICTION = 0, 1, 2  # the columns of NLIScorer.class_probs

#: premises, hypotheses -> (n, 3) probabilities over (entailment, neutral, contradiction)
ClassProbs = Callable[[list[str], list[str]], np.ndarray]


def pair_grid(records: Sequence[Record]) -> tuple[list[str], list[str]]:
    """Premises and hypotheses of every ordered pair (a, b) of each record's samples, the
    diagonal included, record by record, a-major: the sample texts alone, as Semantic Entropy's
    ``nli_input: answer`` reads them."""
    premises: list[str] = []
    hypotheses: list[str] = []
    for record in records:
        for first in record.samples:
            for second in record.samples:
                premises.append(first)
                hypotheses.append(second)
    return premises, hypotheses


def matrices_from(records: Sequence[Record], probs: np.ndarray) -> dict[str, PairMatrix]:
    """Each record's :class:`PairMatrix` from the flat probabilities of :func:`pair_grid`'s order."""
    out: dict[str, PairMatrix] = {}
    at = 0
    for record in records:
        n = len(record.samples)
        block = np.asarray(probs[at : at + n * n], dtype=np.float64).reshape(n, n, 3)
        at += n * n
        out[record.id] = PairMatrix(block[:, :, ENTAILMENT], block[:, :, NEUTRAL], block[:, :, CONTRADICTION])
    if at != len(probs):
        raise ValueError(f"nli_pair_matrix: {len(probs)} pair probabilities for {at} pairs")
    return out


def pair_matrices_of(records: Sequence[Record], class_probs: ClassProbs) -> dict[str, PairMatrix]:
    """The pair matrices of ``records`` (each with two samples or more), every pair scored by
    ``class_probs`` in one request."""
    premises, hypotheses = pair_grid(records)
    probs = class_probs(premises, hypotheses) if premises else np.zeros((0, 3))
    return matrices_from(records, probs)


def build(ctx: BuildContext) -> dict[str, Any]:
    kept = [p for p in ctx.records if len(p.samples) >= 2]
    skipped = sorted(p.id for p in ctx.records if len(p.samples) < 2)
    if skipped:
        ctx.log.warning("nli_pair_matrix: %d records with fewer than two samples left out", len(skipped))
    scorer = NLIScorer(ctx.params.typed(NLIKnobs, "nli"), cache=ctx.resources.cache)
    matrices = pair_matrices_of(kept, lambda p, h: scorer.class_probs(p, h, progress=True))
    pairs = sum(m.size * m.size for m in matrices.values())
    ctx.log.info("nli_pair_matrix: %d records, %d pairs", len(matrices), pairs)
    return {
        "nli": {"name": scorer.config.name, **scorer.identity},
        "records": {rid: matrix.to_dict() for rid, matrix in matrices.items()},
        "diagnostics": {"records": len(matrices), "pairs": pairs, "records_with_fewer_than_two_samples": skipped},
    }
