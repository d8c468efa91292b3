"""SelfCheckGPT n-gram, cheap step: counts and scores for every n, N and aggregation."""

from __future__ import annotations

from dataclasses import fields

from hallulab.core.config import typed
from hallulab.methods.sample_matrix import sample_choice_from
from hallulab.methods.selfcheck_ngram.corpus import corpora_from_dict
from hallulab.methods.selfcheck_ngram.knobs import NgramKnobs
from hallulab.methods.selfcheck_ngram.ngram import score_corpora
from hallulab.methods.selfcheck_ngram.raw import NgramScores
from hallulab.pipeline.context import AggregateContext, Aggregated
from hallulab.pipeline.controls import AggregateControls


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
