"""The SelfCheckGPT evaluation protocol (§6-7; the released notebooks of selfcheckgpt).

Sentence level (sentences pooled over passages), AUC-PR by the trapezoid rule:
  * NonFact:  positive = label > 0.499 (minor and major inaccurate), score = s.
  * NonFact*: only passages whose mean label is < 0.99 (total-hallucination passages
    dropped; 206 passages / 1632 sentences on WikiBio), positive = label > 0.99
    (major inaccurate only; minor counts as negative), score = s.
  * Factual:  positive = label < 0.499, score = -s (the reference uses 1 - s; the ranking
    and so the PR curve are the same, and -s also works for unbounded scores).
Passage level: Pearson and Spearman between the passage score and the mean label.
Also ROC-AUC and average precision, both on the NonFact task.
All values are reported in percent, like the papers.

Confidence intervals: a percentile bootstrap over *passages* (sentences of one passage
are not independent), ``bootstrap_samples`` resamples, fixed seed.

Undefined metrics: a task that keeps no sentence, or only one class, and a correlation over
passages without spread give NaN with a reason (:mod:`hallulab.evaluation.undefined`);
a sentence or passage whose score is NaN (not scored) is left out and counted.

Unbounded scores: +inf (an n-gram never seen) ranks above every finite score; for the
ranking metrics and correlations it is replaced by (largest finite score + 1), which
keeps the order (ties among infinities stay ties).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hallulab.core.config import setting
from hallulab.data.schema import Record
from hallulab.evaluation import bootstrap, undefined
from hallulab.evaluation.metrics import (
    PRCurve,
    aucpr_trapezoid,
    average_precision,
    pearson,
    pr_curve,
    roc_auc,
    spearman,
)

METRIC_KEYS = (
    "nonfact_aucpr",
    "nonfact_star_aucpr",
    "factual_aucpr",
    "passage_pearson",
    "passage_spearman",
    "roc_auc",
    "avg_precision",
)
TASKS = ("nonfact", "nonfact_star", "factual")


@dataclass(frozen=True)
class ProtocolKnobs:
    """params ``evaluate``: the thresholds of the protocol on the 0 / 0.5 / 1 labels (defaults: the
    SelfCheckGPT released notebooks) and the percentile bootstrap over records."""

    nonfact_threshold: float = setting(0.499, doc="a sentence is NonFact when its label is above this")
    factual_threshold: float = setting(0.499, doc="a sentence is Factual when its label is below this")
    nonfact_star_passage_below: float = setting(
        0.99, doc="NonFact*: only the sentences of passages whose label is below this (not wholly hallucinated)"
    )
    nonfact_star_positive_above: float = setting(0.99, doc="NonFact*: positive when the label is above this")
    bootstrap_samples: int = setting(1000, minimum=1, doc="percentile bootstrap resamples over records")
    ci_level: float = setting(0.95, above=0.0, maximum=1.0, doc="the intervals' confidence level")
    seed: int = setting(0, doc="the bootstrap's seed")


@dataclass(frozen=True)
class LabelledScores:
    """Flat arrays for one variant: per sentence (label, score, passage index) and per passage."""

    sentence_labels: np.ndarray
    sentence_scores: np.ndarray
    sentence_passage: np.ndarray
    passage_labels: np.ndarray
    passage_scores: np.ndarray


def finite_for_ranking(values: np.ndarray) -> np.ndarray:
    """Replace +/-inf by just beyond the finite range, keeping the order."""
    values = np.asarray(values, dtype=np.float64)
    if np.isfinite(values).all():
        return values
    finite = values[np.isfinite(values)]
    high = (finite.max() if finite.size else 0.0) + 1.0
    low = (finite.min() if finite.size else 0.0) - 1.0
    return np.where(values == np.inf, high, np.where(values == -np.inf, low, values))


def align(
    records: Sequence[Record],
    sentence_scores: Mapping[str, Sequence[float]],
    passage_scores: Mapping[str, float],
    variant: str = "",
) -> LabelledScores:
    """Join the sentence-labelled passages with a variant's scores; errors name the passage.

    Passages without sentence labels are left out (they are scored but not evaluated); a
    labelled passage without scores, or with a score count that differs from its label
    count, is an error."""
    labels: list[float] = []
    values: list[float] = []
    owner: list[int] = []
    passage_labels: list[float | None] = []
    passage_values: list[float] = []
    for record in (p for p in records if p.labels is not None):
        assert record.labels is not None
        if record.id not in sentence_scores:
            raise ValueError(f"record {record.id!r}: no sentence scores for variant {variant!r}")
        scores = sentence_scores[record.id]
        if len(scores) != len(record.labels):
            raise ValueError(
                f"record {record.id!r}, field 'sentences': {len(scores)} scores "
                f"for {len(record.labels)} labelled sentences in variant {variant!r}"
            )
        if record.id not in passage_scores:
            raise ValueError(f"record {record.id!r}: no passage (response) score for variant {variant!r}")
        index = len(passage_labels)
        labels.extend(record.labels)
        values.extend(scores)
        owner.extend([index] * len(scores))
        passage_labels.append(record.passage_label)
        passage_values.append(passage_scores[record.id])
    return LabelledScores(
        sentence_labels=np.asarray(labels, dtype=np.float64),
        sentence_scores=finite_for_ranking(np.asarray(values, dtype=np.float64)),
        sentence_passage=np.asarray(owner, dtype=np.int64),
        passage_labels=np.asarray(passage_labels, dtype=np.float64),
        passage_scores=finite_for_ranking(np.asarray(passage_values, dtype=np.float64)),
    )


def scored(data: LabelledScores) -> np.ndarray:
    """Sentences with a score (a NaN score is a unit the variant did not score: left out, counted)."""
    return ~np.isnan(data.sentence_scores)


def task_mask(data: LabelledScores, task: str, cfg: ProtocolKnobs) -> np.ndarray:
    """Which sentences a task evaluates (NonFact* drops the total-hallucination passages)."""
    if task == "nonfact_star":
        return scored(data) & (data.passage_labels[data.sentence_passage] < cfg.nonfact_star_passage_below)
    if task in TASKS:
        return scored(data)
    raise ValueError(f"unknown task {task!r}; expected one of {TASKS}")


def task_arrays(data: LabelledScores, task: str, cfg: ProtocolKnobs) -> tuple[np.ndarray, np.ndarray]:
    """(binary targets, scores) of one sentence-level task."""
    keep = task_mask(data, task, cfg)
    labels, scores = data.sentence_labels[keep], data.sentence_scores[keep]
    if task == "nonfact":
        return labels > cfg.nonfact_threshold, scores
    if task == "factual":
        return labels < cfg.factual_threshold, -scores
    return labels > cfg.nonfact_star_positive_above, scores


def passage_arrays(data: LabelledScores) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(passage scores, mean labels, which passages) of the passages with a score."""
    keep = ~np.isnan(data.passage_scores)
    return data.passage_scores[keep], data.passage_labels[keep], keep


@dataclass(frozen=True)
class PointMetrics:
    """The seven metrics (percent; NaN where undefined) and, for each NaN, why
    (:mod:`hallulab.evaluation.undefined`)."""

    values: dict[str, float]
    reasons: dict[str, str]


def _ranked(
    metric: Callable[[np.ndarray, np.ndarray], float], y: np.ndarray, s: np.ndarray
) -> tuple[float, str | None]:
    reason = undefined.ranking(y)
    return (float("nan"), reason) if reason is not None else (100.0 * metric(y, s), None)


def point_metrics(data: LabelledScores, cfg: ProtocolKnobs) -> PointMetrics:
    """All seven metrics, in percent, with the reason of every undefined one."""
    found: dict[str, tuple[float, str | None]] = {}
    for task in TASKS:
        found[f"{task}_aucpr"] = _ranked(aucpr_trapezoid, *task_arrays(data, task, cfg))
    x, labels, _ = passage_arrays(data)
    why = undefined.correlation(x, labels)
    found["passage_pearson"] = (float("nan"), why) if why else (100.0 * pearson(x, labels), None)
    found["passage_spearman"] = (float("nan"), why) if why else (100.0 * spearman(x, labels), None)
    y, s = task_arrays(data, "nonfact", cfg)
    found["roc_auc"] = _ranked(roc_auc, y, s)
    found["avg_precision"] = _ranked(average_precision, y, s)
    return PointMetrics(
        values={key: found[key][0] for key in METRIC_KEYS},
        reasons={key: reason for key in METRIC_KEYS if (reason := found[key][1]) is not None},
    )


def compute_metrics(data: LabelledScores, cfg: ProtocolKnobs) -> dict[str, float]:
    """All seven metrics, in percent (NaN where undefined)."""
    return point_metrics(data, cfg).values


def bootstrap_draws(data: LabelledScores, cfg: ProtocolKnobs, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Every metric (percent) on each resample, given the (B, passages) multiplicities: one
    array of B draws per metric key (NaN where a resample leaves it undefined)."""
    sentence_weights = weights[:, data.sentence_passage]
    draws: dict[str, np.ndarray] = {}
    for task in TASKS:
        y, s = task_arrays(data, task, cfg)
        keep = task_mask(data, task, cfg)
        draws[f"{task}_aucpr"] = 100.0 * bootstrap.aucpr_trapezoid(y, s, sentence_weights[:, keep])
    x, labels, keep = passage_arrays(data)
    draws["passage_pearson"] = 100.0 * bootstrap.weighted_pearson(x, labels, weights[:, keep])
    draws["passage_spearman"] = 100.0 * bootstrap.weighted_spearman(x, labels, weights[:, keep])
    y, s = task_arrays(data, "nonfact", cfg)
    draws["roc_auc"] = 100.0 * bootstrap.roc_auc(y, s, sentence_weights[:, scored(data)])
    draws["avg_precision"] = 100.0 * bootstrap.average_precision(y, s, sentence_weights[:, scored(data)])
    return draws


def bootstrap_intervals(
    data: LabelledScores, cfg: ProtocolKnobs, reasons: Mapping[str, str] | None = None
) -> dict[str, bootstrap.Interval]:
    """Percentile bootstrap CI of every metric, resampling passages with replacement.

    All ``cfg.bootstrap_samples`` resamples at once (:mod:`hallulab.evaluation.bootstrap`):
    a resample is a multiplicity per passage, every metric a weighted one. ``reasons`` are the
    point estimates' (:func:`point_metrics`); an interval is null where its point is, and
    where every unit comes from one passage."""
    if reasons is None:
        reasons = point_metrics(data, cfg).reasons
    n_passages = len(data.passage_labels)
    weights = bootstrap.resample_weights(n_passages, cfg.bootstrap_samples, cfg.seed)
    draws = bootstrap_draws(data, cfg, weights)
    clusters: dict[str, int] = {}
    for task in TASKS:
        clusters[f"{task}_aucpr"] = len(np.unique(data.sentence_passage[task_mask(data, task, cfg)]))
    clusters["passage_pearson"] = clusters["passage_spearman"] = int(passage_arrays(data)[2].sum())
    clusters["roc_auc"] = clusters["avg_precision"] = clusters["nonfact_aucpr"]
    return {key: bootstrap.summarise(draws[key], cfg.ci_level, reasons.get(key), clusters[key]) for key in METRIC_KEYS}


def pr_curves(data: LabelledScores, cfg: ProtocolKnobs) -> dict[str, PRCurve]:
    """The PR curve of each sentence-level task (for plots)."""
    curves = {}
    for task in TASKS:
        y, s = task_arrays(data, task, cfg)
        if y.any() and not y.all():
            curves[task] = pr_curve(y, s)
    return curves


def random_baseline(data: LabelledScores, cfg: ProtocolKnobs) -> dict[str, float]:
    """AUC-PR of a random scorer = the positive rate of each task (Table 2's "Random" row);
    NaN for a task that keeps no sentence."""
    rates = {}
    for task in TASKS:
        y = task_arrays(data, task, cfg)[0]
        rates[f"{task}_aucpr"] = 100.0 * float(y.mean()) if y.size else float("nan")
    return rates


@dataclass(frozen=True)
class VariantEvaluation:
    """One variant under the protocol: metrics with their reasons, intervals, PR curves, counts."""

    metrics: PointMetrics
    intervals: dict[str, bootstrap.Interval]
    curves: dict[str, PRCurve]
    nan_scores: int


def evaluate_variant(data: LabelledScores, cfg: ProtocolKnobs) -> VariantEvaluation:
    """Every metric of one variant's aligned scores; total on any subset (see
    :mod:`hallulab.evaluation.undefined`)."""
    point = point_metrics(data, cfg)
    intervals = bootstrap_intervals(data, cfg, point.reasons) if cfg.bootstrap_samples > 0 else {}
    nan_scores = int(np.isnan(data.sentence_scores).sum() + np.isnan(data.passage_scores).sum())
    return VariantEvaluation(point, intervals, pr_curves(data, cfg), nan_scores)
