"""Lexical Similarity, cheap step: minus the mean pairwise ROUGE F-measure of the samples."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np

from hallulab.core.units import ScoreTable
from hallulab.methods.lexical_similarity.knobs import LexicalSimilarityKnobs
from hallulab.methods.lexical_similarity.rouge import rouge_f, tokens
from hallulab.methods.sample_matrix import sample_choice_from, selected_columns
from hallulab.methods.sample_selection import SampleKnobs
from hallulab.methods.skipped import HAS_RESPONSE, Requirement, partition
from hallulab.pipeline.context import AggregateContext, Aggregated


def lexical_uncertainty(samples: list[tuple[str, ...]], metric: str) -> float:
    """-(mean over pairs i < j of ROUGE F(s_i, s_j)); needs at least two samples."""
    return -float(np.mean([rouge_f(a, b, metric) for a, b in combinations(samples, 2)]))


#: The count each reason for leaving a record out adds to (the diagnostics' older keys).
SKIP_COUNTS = {
    "no response": "records_without_response",
    "fewer than two samples": "records_with_fewer_than_two_samples",
}


def two_samples_chosen(selection: SampleKnobs) -> Requirement:
    """A record needs two chosen samples: one pair to compare (a bad N is a ConfigError)."""
    return Requirement("fewer than two samples", lambda p: len(selected_columns(p.id, len(p.samples), selection)) >= 2)


def aggregate(ctx: AggregateContext[None]) -> Aggregated:
    knobs = ctx.params.typed(LexicalSimilarityKnobs, "lexical_similarity")
    selection = sample_choice_from(ctx.params)
    table = ScoreTable()
    scorable = partition(ctx.records, HAS_RESPONSE, two_samples_chosen(selection))
    scorable.warn(ctx.log, "Lexical Similarity")
    counts: Counter[str] = Counter(SKIP_COUNTS[s.reason] for s in scorable.skipped)
    for record in scorable.kept:
        chosen = [record.samples[int(i)] for i in selected_columns(record.id, len(record.samples), selection)]
        words = [tokens(text, knobs.use_stemmer) for text in chosen]
        for metric in knobs.metrics:
            table.add_response(f"lexsim_{metric}", record.id, lexical_uncertainty(words, metric))
        counts["records_scored"] += 1
    diagnostics = {
        **dict(counts),
        "num_samples": selection.used,
        "use_stemmer": knobs.use_stemmer,
        **scorable.diagnostics(),
    }
    return Aggregated(table.frame(), diagnostics)
