"""Lexical Similarity, cheap step: minus the mean pairwise ROUGE F-measure of the samples."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from hallulab.core.config import setting
from hallulab.core.units import ScoreTable
from hallulab.methods.lexical_similarity.rouge import METRICS, rouge_f, tokens
from hallulab.methods.sample_matrix import sample_choice_from, selected_columns
from hallulab.pipeline.context import AggregateContext, Aggregated


@dataclass(frozen=True)
class LexicalSimilarityKnobs:
    """params ``lexical_similarity``."""

    metrics: tuple[str, ...] = setting(("rougeL",), choices=METRICS, scalar_ok=True, doc="lm-polygraph: rougeL")
    use_stemmer: bool = setting(True, doc="Porter stemming of tokens longer than 3 characters (rouge-score's)")


def lexical_uncertainty(samples: list[tuple[str, ...]], metric: str) -> float:
    """-(mean over pairs i < j of ROUGE F(s_i, s_j)); needs at least two samples."""
    return -float(np.mean([rouge_f(a, b, metric) for a, b in combinations(samples, 2)]))


def aggregate(ctx: AggregateContext) -> Aggregated:
    knobs = ctx.params.typed(LexicalSimilarityKnobs, "lexical_similarity")
    selection = sample_choice_from(ctx.params)
    table = ScoreTable()
    counts: Counter[str] = Counter()
    for passage in ctx.passages:
        if passage.response is None:
            counts["records_without_response"] += 1
            continue
        chosen = [passage.samples[int(i)] for i in selected_columns(passage.id, len(passage.samples), selection)]
        if len(chosen) < 2:
            counts["records_with_fewer_than_two_samples"] += 1
            continue
        words = [tokens(text, knobs.use_stemmer) for text in chosen]
        for metric in knobs.metrics:
            table.add_response(f"lexsim_{metric}", passage.id, lexical_uncertainty(words, metric))
        counts["records_scored"] += 1
    diagnostics = {**dict(counts), "num_samples": selection.num_samples, "use_stemmer": knobs.use_stemmer}
    return Aggregated(table.frame(), diagnostics)
