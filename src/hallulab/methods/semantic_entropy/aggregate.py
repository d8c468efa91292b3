"""Semantic Entropy, cheap step: the chosen samples' semantic classes and the entropy over
them, for each class-probability reading (the formulas are in the package docstring)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hallulab.core.config import setting
from hallulab.core.units import ScoreTable
from hallulab.methods.sample_matrix import sample_choice_from, selected_columns
from hallulab.methods.semantic_entropy.raw import SemanticEntropyScores
from hallulab.pipeline.context import AggregateContext, Aggregated
from hallulab.text.semantic_classes import cluster_by_bidirectional_entailment, members

CLASS_PROBABILITIES = ("sum", "frequency")
ENTROPY_ESTIMATIONS = ("mean", "direct")
ENTAILMENT = 0


@dataclass(frozen=True)
class SemanticEntropyKnobs:
    """params ``semantic_entropy.aggregate``."""

    class_probability: tuple[str, ...] = setting(
        CLASS_PROBABILITIES,
        choices=CLASS_PROBABILITIES,
        scalar_ok=True,
        doc="sum: logsumexp of the samples' log-probabilities (Kuhn et al.); frequency: n_c / N (Farquhar et al.)",
    )
    entropy_estimation: str = setting(
        "mean", choices=ENTROPY_ESTIMATIONS, doc="mean: Kuhn et al.'s Monte-Carlo estimate (lm-polygraph's default)"
    )


def class_log_probs(labels: Sequence[int], log_probs: Sequence[float] | None) -> np.ndarray:
    """log p(c | x) per class: logsumexp of its samples' log-probabilities, or log(n_c / N)
    when ``log_probs`` is None (the frequency reading)."""
    groups = members(labels)
    if log_probs is None:
        return np.log(np.array([len(g) for g in groups], dtype=np.float64) / len(labels))
    values = np.asarray(log_probs, dtype=np.float64)
    return np.array([np.logaddexp.reduce(values[g]) for g in groups])


def semantic_entropy(labels: Sequence[int], log_probs: Sequence[float] | None, estimation: str) -> float:
    """mean: -(1/N) sum_j log p(c_j | x); direct: -sum_j p(c_j | x) log p(c_j | x)."""
    per_sample = class_log_probs(labels, log_probs)[np.asarray(labels)]
    if estimation == "mean":
        return float(-np.mean(per_sample))
    return float(-np.sum(per_sample * np.exp(per_sample)))


def aggregate(ctx: AggregateContext[SemanticEntropyScores]) -> Aggregated:
    knobs = ctx.params.typed(SemanticEntropyKnobs, "semantic_entropy.aggregate")
    selection = sample_choice_from(ctx.params)
    stored = ctx.raw
    table = ScoreTable()
    counts: Counter[str] = Counter()
    class_counts: list[int] = []
    for passage in ctx.passages:
        record = stored.records.get(passage.id)
        if record is None:
            continue
        chosen = selected_columns(passage.id, len(record["log_probs"]), selection)
        entails = np.asarray(record["classes"])[np.ix_(chosen, chosen)] == ENTAILMENT
        labels = cluster_by_bidirectional_entailment(entails)
        class_counts.append(max(labels) + 1)
        chosen_log_probs = [record["log_probs"][int(i)] for i in chosen]
        for reading in knobs.class_probability:
            if reading == "sum":
                if any(v is None for v in chosen_log_probs):
                    counts["se_sum_records_with_an_empty_sample"] += 1
                    continue
                log_probs: list[float] | None = [float(v) for v in chosen_log_probs if v is not None]
            else:
                log_probs = None
            entropy = semantic_entropy(labels, log_probs, knobs.entropy_estimation)
            table.add_response(f"se_{reading}", passage.id, entropy)
        counts["records_scored"] += 1
    diagnostics = {
        **stored.diagnostics,
        **dict(counts),
        "num_samples": selection.num_samples,
        "entropy_estimation": knobs.entropy_estimation,
        "nli_input": stored.nli_input,
        "nli": stored.nli.get("name"),
        "proxy": stored.proxy.get("model"),
        "mean_semantic_classes": float(np.mean(class_counts)) if class_counts else None,
    }
    return Aggregated(table.frame(), diagnostics)
