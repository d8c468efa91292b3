"""Semantic Entropy, cheap step: the chosen samples' semantic classes and the entropy over
them, for each reading (the formulas are in the package docstring)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from hallulab.core.config import ConfigError
from hallulab.core.errors import RecordError
from hallulab.core.units import ScoreTable
from hallulab.methods.sample_matrix import sample_choice_from, selected_columns
from hallulab.methods.sample_selection import SampleKnobs
from hallulab.methods.semantic_entropy.knobs import LAZY, SemanticEntropyKnobs
from hallulab.methods.semantic_entropy.pairs import (
    LM_POLYGRAPH,
    Clustering,
    UnscoredPairError,
    farquhar,
    stored_classes,
)
from hallulab.methods.semantic_entropy.raw import SemanticEntropyScores
from hallulab.pipeline.context import AggregateContext, Aggregated
from hallulab.text.semantic_classes import members

#: Farquhar et al.'s reading, one variant per equivalence rule of their ``get_semantic_ids``:
#: ``se_farquhar``, the rule their command line runs by default (``--strict_entailment``, True:
#: entailment both ways); ``se_farquhar_nocontra``, the looser rule of the function's own default
#: (``strict_entailment=False``: neither direction a contradiction, not both neutral), labelled
FARQUHAR_VARIANTS = (("se_farquhar", "bidirectional"), ("se_farquhar_nocontra", "no_contradiction"))


def class_log_probs(labels: Sequence[int], log_probs: Sequence[float] | None) -> np.ndarray:
    """log p(c | x) per class: logsumexp of its samples' log-probabilities, or log(n_c / N)
    when ``log_probs`` is None (the frequency reading)."""
    groups = members(labels)
    if log_probs is None:
        return np.log(np.array([len(g) for g in groups], dtype=np.float64) / len(labels))
    values = np.asarray(log_probs, dtype=np.float64)
    return np.array([np.logaddexp.reduce(values[g]) for g in groups])


def semantic_entropy(labels: Sequence[int], log_probs: Sequence[float] | None, estimation: str) -> float:
    """lm-polygraph's ``SemanticEntropy``. mean: -(1/N) sum_j log p(c_j | x), the per-sample
    Monte-Carlo mean; direct: -sum_j p(c_j | x) log p(c_j | x)."""
    per_sample = class_log_probs(labels, log_probs)[np.asarray(labels)]
    if estimation == "mean":
        return float(-np.mean(per_sample))
    return float(-np.sum(per_sample * np.exp(per_sample)))


def record_classes(
    record_id: str, field: str, classes: list[list[int]], columns: np.ndarray, clustering: Clustering
) -> list[int]:
    """The semantic classes of the samples at ``columns`` from one record's stored classes
    (:func:`hallulab.methods.semantic_entropy.pairs.stored_classes`: lm-polygraph's rule, or
    Farquhar et al.'s ``get_semantic_ids``); a pair they read that the score step did not score
    is a one-line error naming the record and the field."""
    try:
        return stored_classes(np.asarray(classes, dtype=np.int64), columns, clustering)
    except UnscoredPairError as missing:
        raise RecordError(
            record_id, field, f"{missing}; re-run score_semantic_entropy (semantic_entropy.score.pairs=all: every pair)"
        ) from None


def check_selection(stored: SemanticEntropyScores, selection: SampleKnobs) -> None:
    """A lazy score step stored the pairs of the first N samples, for every N, not those of a
    seeded random subset: that choice needs every pair (one line naming both settings)."""
    if stored.pairs == LAZY and selection.selection != "first":
        raise ConfigError(
            f"samples.selection={selection.selection}: semantic_entropy's scores hold only the NLI pairs the classes "
            "of the first N samples read (semantic_entropy.score.pairs=lazy); set semantic_entropy.score.pairs=all"
        )


def farquhar_entropy(labels: Sequence[int], log_probs: Sequence[float], token_counts: Sequence[int]) -> float:
    """Farquhar et al.'s semantic entropy as their released ``compute_uncertainty_measures.py``
    computes it: l_j = log p(s_j | x) / |s_j| (the mean token log-likelihood);
    log p(c | x) = logsumexp_{j in c} l_j - logsumexp_j l_j (``logsumexp_by_id``,
    ``sum_normalized``); SE = -sum_c p(c | x) log p(c | x) (``predictive_entropy_rao``)."""
    normalised = np.asarray(log_probs, dtype=np.float64) / np.asarray(token_counts, dtype=np.float64)
    per_class = class_log_probs(labels, list(normalised - np.logaddexp.reduce(normalised)))
    return float(-np.sum(np.exp(per_class) * per_class))


def aggregate(ctx: AggregateContext[SemanticEntropyScores]) -> Aggregated:
    knobs = ctx.params.typed(SemanticEntropyKnobs, "semantic_entropy.aggregate")
    selection = sample_choice_from(ctx.params)
    stored = ctx.raw
    check_selection(stored, selection)
    table = ScoreTable()
    counts: Counter[str] = Counter()
    class_counts: list[int] = []
    farquhar_counts: dict[str, list[int]] = {variant: [] for variant, _ in FARQUHAR_VARIANTS}
    for record in ctx.records:
        stored_record = stored.records.get(record.id)
        if stored_record is None:
            continue
        chosen = selected_columns(record.id, len(stored_record["log_probs"]), selection)
        labels = record_classes(record.id, "classes", stored_record["classes"], chosen, LM_POLYGRAPH)
        class_counts.append(max(labels) + 1)
        chosen_log_probs = [stored_record["log_probs"][int(i)] for i in chosen]
        empty = any(v is None for v in chosen_log_probs)
        for reading in knobs.class_probability:
            if reading == "sum":
                if empty:
                    counts["se_sum_records_with_an_empty_sample"] += 1
                    continue
                log_probs: list[float] | None = [float(v) for v in chosen_log_probs if v is not None]
            else:
                log_probs = None
            entropy = semantic_entropy(labels, log_probs, knobs.entropy_estimation)
            table.add_response(f"se_{reading}", record.id, entropy)
        if "question_classes" not in stored_record or "token_counts" not in stored_record:
            counts["se_farquhar_records_without_question_classes"] += 1
        elif empty:
            counts["se_farquhar_records_with_an_empty_sample"] += 1
        else:
            lengths = [stored_record["token_counts"][int(i)] for i in chosen]
            answer_log_probs = [float(v) for v in chosen_log_probs if v is not None]
            for variant, rule in FARQUHAR_VARIANTS:
                grouped = record_classes(
                    record.id, "question_classes", stored_record["question_classes"], chosen, farquhar(rule)
                )
                farquhar_counts[variant].append(max(grouped) + 1)
                table.add_response(variant, record.id, farquhar_entropy(grouped, answer_log_probs, lengths))
        counts["records_scored"] += 1
    diagnostics = {
        **stored.diagnostics,
        **dict(counts),
        "num_samples": selection.used,
        "entropy_estimation": knobs.entropy_estimation,
        "farquhar_equivalences": dict(FARQUHAR_VARIANTS),
        "nli_input": stored.nli_input,
        "nli": stored.nli.get("name"),
        "proxy": stored.proxy.get("model"),
        "mean_semantic_classes": float(np.mean(class_counts)) if class_counts else None,
        **{
            f"mean_semantic_classes_{variant.removeprefix('se_')}": float(np.mean(found)) if found else None
            for variant, found in farquhar_counts.items()
        },
    }
    return Aggregated(table.frame(), diagnostics)
