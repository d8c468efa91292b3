"""SAR, expensive step: each sample's token log-probabilities under the ``proxy`` LLM
(teacher-forced after ``prefix``, in one batched, cached request: with Semantic Entropy's prefix
these are its calls), then one request of sentence similarities for the whole data set: every
ordered pair of a record's samples, and each token's relevance pair of each sample (with
``token_relevance``) and of the response (its tokens from the ``response_tokens`` artifact). It
stores each sample's sequence log-probability and TokenSAR, the samples' similarity matrix and
the response's TokenSAR; N, the choice of samples and the temperature t are the aggregate
step's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hallulab.artifacts.response_tokens import token_stats
from hallulab.artifacts.response_tokens.build import prefix_for
from hallulab.core.config import ConfigError
from hallulab.core.errors import RecordError
from hallulab.core.token_stats import TokenStats
from hallulab.data.schema import Record
from hallulab.methods.sar.formula import token_sar
from hallulab.methods.sar.knobs import SarScoreKnobs
from hallulab.methods.sar.raw import RecordSar, SarScores
from hallulab.methods.sar.relevance import relevance_pairs
from hallulab.methods.sentence_similarity import (
    PairRequest,
    PairSimilarity,
    SentenceSimilarity,
    SentenceSimilarityKnobs,
)
from hallulab.methods.skipped import HAS_RESPONSE, HAS_SAMPLES, partition
from hallulab.pipeline.context import BuildContext


@dataclass(frozen=True)
class TokenPlan:
    """One text's token similarities: the request's value at ``at[i]``, or ``fixed[i]`` where
    ``at[i]`` is None (a similarity no model is asked for)."""

    at: tuple[int | None, ...]
    fixed: tuple[float, ...]

    @classmethod
    def of(cls, request: PairRequest, context: str | None, text: str, tokens: Sequence[TokenStats]) -> TokenPlan:
        at: list[int | None] = []
        fixed: list[float] = []
        for item in relevance_pairs(context, text, tokens):
            if isinstance(item, tuple):
                at.append(request.add([item]).start)
                fixed.append(0.0)
            else:
                at.append(None)
                fixed.append(item)
        return cls(tuple(at), tuple(fixed))

    def read(self, values: np.ndarray) -> np.ndarray:
        return np.asarray(
            [self.fixed[i] if at is None else values[at] for i, at in enumerate(self.at)], dtype=np.float64
        )


def _plan(
    request: PairRequest, record: Record, field: str, text: str, tokens: Sequence[TokenStats]
) -> TokenPlan | None:
    """The text's token plan (None without tokens); a RecordError naming the field when the
    tokens' offsets do not fit the text."""
    if not tokens:
        return None
    try:
        return TokenPlan.of(request, record.prompt, text, tokens)
    except ValueError as error:
        raise RecordError(record.id, field, f"its token statistics do not fit its text ({error})") from error


def sar_records(
    records: Sequence[Record],
    sample_tokens: Mapping[str, Sequence[Sequence[TokenStats]]],
    response_tokens: Mapping[str, Sequence[TokenStats]],
    similarity: PairSimilarity,
    *,
    token_relevance: bool,
) -> tuple[dict[str, RecordSar], Counter[str]]:
    """Each record's stored values (:class:`RecordSar`) from its samples' and its response's
    token statistics, every similarity in one request to ``similarity``, and the counts."""
    request = PairRequest.empty()
    plans = []
    for record in records:
        samples = record.samples
        matrix = request.add([(a, b) for a in samples for b in samples])
        tokens = sample_tokens[record.id]
        sample_plans = (
            [
                _plan(request, record, f"samples[{j}]", s, t)
                for j, (s, t) in enumerate(zip(samples, tokens, strict=True))
            ]
            if token_relevance
            else None
        )
        response = _plan(request, record, "response", record.response or "", response_tokens.get(record.id, ()))
        plans.append((record, matrix, sample_plans, response))
    values = request.run(similarity)
    counts: Counter[str] = Counter({"similarity_pairs": len(request.firsts)})
    by_record: dict[str, RecordSar] = {}
    for record, matrix, sample_plans, response in plans:
        n = len(record.samples)
        tokens = sample_tokens[record.id]
        log_probs: list[float | None] = [sum(t.logprob for t in stats) if stats else None for stats in tokens]
        counts["samples_without_tokens"] += sum(not stats for stats in tokens)
        values_of: RecordSar = {
            "log_probs": log_probs,
            "similarity": values[matrix].reshape(n, n).tolist(),
            "response_token_sar": None,
        }
        if sample_plans is not None:
            token_sars: list[float | None] = []
            for stats, plan in zip(tokens, sample_plans, strict=True):
                value = None if plan is None else token_sar([t.logprob for t in stats], plan.read(values))
                counts["samples_with_every_relevance_zero"] += plan is not None and value is None
                token_sars.append(value)
            values_of["token_sar"] = token_sars
        if response is None:
            counts["responses_without_tokens"] += 1
        else:
            lls = [t.logprob for t in response_tokens[record.id]]
            values_of["response_token_sar"] = token_sar(lls, response.read(values))
            counts["responses_with_every_relevance_zero"] += values_of["response_token_sar"] is None
        by_record[record.id] = values_of
        counts["records_scored"] += 1
    return by_record, counts


def score(ctx: BuildContext) -> SarScores:
    knobs = ctx.params.typed(SarScoreKnobs, "sar.score")
    chosen = partition(ctx.records, HAS_RESPONSE, HAS_SAMPLES)
    chosen.warn(ctx.log, "SAR")
    records = chosen.kept
    llm = ctx.resources.llm("proxy")
    if not llm.capabilities.teacher_forcing:
        raise ConfigError(
            f"llms.proxy ({ctx.resources.llm_name('proxy')}) cannot teacher-force the samples for SAR; "
            "choose a white-box backend (hf, vllm, or a vLLM server)"
        )
    config = ctx.params.typed(SentenceSimilarityKnobs, "sentence_similarity")
    similarity = SentenceSimilarity(config, cache=ctx.resources.cache)
    if records:
        similarity.model  # noqa: B018  (a model that cannot be loaded stops the step before the proxy's calls)
    prefixes = [prefix_for(knobs.prefix, p) for p in records for _ in p.samples]
    scored = llm.score(prefixes, [s for p in records for s in p.samples]) if prefixes else []
    sample_tokens: dict[str, list[list[TokenStats]]] = {}
    at = 0
    for record in records:
        sample_tokens[record.id] = scored[at : at + len(record.samples)]
        at += len(record.samples)
    by_record, counts = sar_records(
        records,
        sample_tokens,
        token_stats(ctx.artifacts["response_tokens"]),
        similarity.scores,
        token_relevance=knobs.token_relevance,
    )
    return SarScores(
        proxy=llm.llm.identity().as_key(),
        similarity={"name": config.name, **similarity.identity},
        prefix=knobs.prefix,
        token_relevance=knobs.token_relevance,
        records=by_record,
        diagnostics={**dict(counts), **chosen.diagnostics()},
    )
