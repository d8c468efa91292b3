"""SelfCheckGPT n-gram, cheap step: counts and scores for every n, N and aggregation."""

from __future__ import annotations

from dataclasses import dataclass, fields

from hallulab.core.config import setting, typed
from hallulab.methods.sample_matrix import sample_choice_from
from hallulab.methods.selfcheck_ngram.corpus import corpora_from_dict
from hallulab.methods.selfcheck_ngram.ngram import AGGREGATIONS, score_corpora
from hallulab.methods.selfcheck_ngram.raw import NgramScores
from hallulab.pipeline.context import AggregateContext, Aggregated
from hallulab.pipeline.controls import AggregateControls


@dataclass(frozen=True)
class NgramKnobs:
    """The sweep knobs of ``selfcheck_ngram`` (N and the choice of samples come from
    ``selfcheck``, read once for every method: :func:`sample_choice_from`)."""

    n: tuple[int, ...] = setting((1, 2, 3, 4, 5), minimum=1, scalar_ok=True, doc="n-gram order(s); Table 7: 1..5")
    aggregations: tuple[str, ...] = setting(AGGREGATIONS, choices=AGGREGATIONS, scalar_ok=True)
    lowercase: bool = True
    smoothing_k: float = setting(0.0, minimum=0.0, doc="add-k smoothing; the paper uses 0")


def knobs(ctx: AggregateContext[NgramScores]) -> NgramKnobs:
    values = {f.name: ctx.params.get(f"selfcheck_ngram.{f.name}") for f in fields(NgramKnobs)}
    return typed(NgramKnobs, values, "selfcheck_ngram")


def headline_variants(cfg: NgramKnobs) -> tuple[str, ...]:
    """The unigram rows, one per aggregation (SelfCheckGPT Table 7's n = 1; its max is Table 2's
    n-gram row), or those of the lowest order asked for when 1 is not: what the summary and
    the API show unless every variant is asked for."""
    order = 1 if 1 in cfg.n else min(cfg.n)
    return tuple(f"ngram_n{order}_{aggregation}" for aggregation in cfg.aggregations)


def aggregate(ctx: AggregateContext[NgramScores]) -> Aggregated:
    cfg = knobs(ctx)
    selection = sample_choice_from(ctx.params)
    corpora = corpora_from_dict(ctx.raw.corpora)
    frame, unseen = score_corpora(
        corpora,
        list(cfg.n),
        list(cfg.aggregations),
        selection=selection,
        lowercase=cfg.lowercase,
        smoothing_k=cfg.smoothing_k,
    )
    diagnostics = {
        "unseen_tokens": unseen,
        "num_samples": selection.used,
        "sample_selection": selection.selection,
        "passages": len(corpora),
        "skipped_records_without_samples": ctx.raw.skipped_records,
        # the count the score step stored (a file stored before the ids were kept names none)
        "skipped_records": ctx.raw.skipped_records,
        "skipped_record_ids": sorted(ctx.raw.skipped_record_ids),
    }
    return Aggregated(frame, diagnostics, AggregateControls(headline_variants=headline_variants(cfg)))
