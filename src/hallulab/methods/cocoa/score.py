"""CoCoA, expensive step: the similarity of each response to each of its samples, in both
orders, in one cached request of sentence similarities for the whole data set (the response's
token statistics are the ``response_tokens`` artifact's, read by the aggregate step). No sweep
knob is read here: N and the choice of samples are the aggregate step's."""

from __future__ import annotations

from collections.abc import Sequence

from hallulab.data.schema import Record
from hallulab.methods.cocoa.formula import symmetric_similarity
from hallulab.methods.cocoa.raw import CocoaScores
from hallulab.methods.sentence_similarity import (
    PairRequest,
    PairSimilarity,
    SentenceSimilarity,
    SentenceSimilarityKnobs,
)
from hallulab.methods.skipped import HAS_RESPONSE, HAS_SAMPLES, partition
from hallulab.pipeline.context import BuildContext


def response_similarities(records: Sequence[Record], similarity: PairSimilarity) -> dict[str, list[float]]:
    """Each record's (g(response, s_j) + g(s_j, response)) / 2 for every sample s_j, every pair of
    the data set in one request to ``similarity``."""
    request = PairRequest.empty()
    planned = []
    for record in records:
        response = record.response or ""
        forward = request.add([(response, sample) for sample in record.samples])
        backward = request.add([(sample, response) for sample in record.samples])
        planned.append((record.id, forward, backward))
    values = request.run(similarity)
    return {rid: symmetric_similarity(values[f], values[b]).tolist() for rid, f, b in planned}


def score(ctx: BuildContext) -> CocoaScores:
    chosen = partition(ctx.records, HAS_RESPONSE, HAS_SAMPLES)
    chosen.warn(ctx.log, "CoCoA")
    config = ctx.params.typed(SentenceSimilarityKnobs, "sentence_similarity")
    similarity = SentenceSimilarity(config, cache=ctx.resources.cache)
    records = response_similarities(chosen.kept, similarity.scores)
    pairs = sum(2 * len(p.samples) for p in chosen.kept)
    return CocoaScores(
        similarity={"name": config.name, **similarity.identity},
        records=records,
        diagnostics={"records_scored": len(records), "similarity_pairs": pairs, **chosen.diagnostics()},
    )
