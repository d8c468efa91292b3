"""SelfCheckGPT n-gram, expensive step: every response and sample split into sentences and
tokenised once with spaCy (through the call cache)."""

from __future__ import annotations

from hallulab.core.config import ConfigError
from hallulab.methods.sample_matrix import scorable
from hallulab.methods.selfcheck_ngram.corpus import RESPONSE_SPLITS, build_ngram_corpora, corpora_to_dict
from hallulab.methods.selfcheck_ngram.raw import NgramScores
from hallulab.pipeline.context import BuildContext


def score(ctx: BuildContext) -> NgramScores:
    response_split = ctx.params.get("selfcheck_ngram.response_split")
    if response_split not in RESPONSE_SPLITS:
        raise ConfigError(f"selfcheck_ngram.response_split: {response_split!r} is not one of {list(RESPONSE_SPLITS)}")
    chosen = scorable(ctx.records)
    chosen.warn(ctx.log, "SelfCheck n-gram")
    corpora = build_ngram_corpora(chosen.kept, ctx.resources.spacy, response_split)
    return NgramScores(
        spacy=ctx.resources.spacy.identity,
        response_split=response_split,
        skipped_records=len(chosen.skipped),
        corpora=corpora_to_dict(corpora),
        skipped_record_ids=chosen.skipped_ids(),
    )
