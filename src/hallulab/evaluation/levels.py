"""Evaluation at every level the data set has labels for.

* ``sentence`` (WikiBio-style sentence labels): the SelfCheckGPT protocol
  (:mod:`hallulab.evaluation.protocol`): NonFact / NonFact* / Factual AUC-PR, passage
  Pearson / Spearman (against the response-level score), ROC-AUC, average precision.
* ``claim`` (claims given by the data set with labels, e.g. FactualBio): the CCP paper's
  claim-level protocol with unsupported (label > 0.499) as the positive class: ROC-AUC,
  PR-AUC as lm-polygraph computes it (average precision) and the prediction-rejection ratio
  (PRR). A method's own facts (FactSelfCheck's triples, HalluCheck's NER facts; level
  ``fact``) are units the method found, not the data set's claims: no data set here labels
  them, so they are scored and not evaluated (a method scores given claims at level
  ``claim``).
* ``response`` (a label of the whole response, e.g. the SAC3 QA sets): HalluCheck's
  AUC-ROC and AP (plus the trapezoid AUC-PR of its released code).
* ``prompt`` (Concept-7's familiarity labels): Self-Familiarity's AUC and, at the threshold
  the method chose without test labels (its basic records), ACC and F1 with unfamiliar as the
  positive class; Pearson (Table 2's PEA) between the score and the annotated degree of
  unfamiliarity (``meta.unfamiliarity``, from the 1-9 rating) when the record has one, else
  the binary label.

Every metric is in percent (the papers' unit) with a percentile bootstrap interval that
resamples records. A metric undefined on the data (one class only) is NaN, never 0, and is
written as null. Units of a record without labels are scored but not evaluated; the counts
of labelled and unlabelled records are part of the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from hallulab.data.schema import Passage
from hallulab.evaluation import bootstrap
from hallulab.evaluation.metrics import (
    PRCurve,
    accuracy_f1,
    aucpr_trapezoid,
    average_precision,
    pearson,
    pr_curve,
    prediction_rejection_ratio,
    roc_auc,
)
from hallulab.evaluation.protocol import (
    ProtocolConfig,
    align,
    evaluate_variants,
    finite_for_ranking,
    random_baseline,
)
from hallulab.units import level_rows, record_scores, sentence_scores, variants

UNSUPPORTED_ABOVE = 0.499  # a claim labelled minor or major false is unsupported (positive)

#: Metric keys per level, in output order (sentence keys are the SelfCheckGPT protocol's).
LEVEL_METRICS: dict[str, tuple[str, ...]] = {
    "claim": ("claim_roc_auc", "claim_pr_auc", "claim_prr"),
    "fact": ("fact_roc_auc", "fact_pr_auc", "fact_prr"),
    "response": ("response_roc_auc", "response_ap", "response_aucpr"),
    "prompt": ("prompt_auc", "prompt_acc", "prompt_f1", "prompt_pearson"),
}


@dataclass
class LevelResult:
    """Metrics of every variant at one level."""

    level: str
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)
    intervals: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    curves: dict[str, dict[str, PRCurve]] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    random_baseline: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class UnitLabels:
    """Binary labels of one level's units, keyed by (record id, unit index), with the cluster
    (record) of every unit for the bootstrap."""

    keys: list[tuple[str, int]]
    labels: np.ndarray  # float labels as the data gives them (graded where the data grades them)
    positive: np.ndarray  # bool: the positive class


def unit_labels(passages: Sequence[Passage], level: str) -> UnitLabels:
    keys: list[tuple[str, int]] = []
    values: list[float] = []
    graded: list[float] = []
    for passage in passages:
        if level == "claim":
            for index, claim in enumerate(passage.claims):
                if claim.label is not None:
                    keys.append((passage.id, index))
                    values.append(claim.label)
                    graded.append(claim.label)
        elif level == "response" and passage.response_label is not None:
            keys.append((passage.id, 0))
            values.append(passage.response_label)
            graded.append(passage.response_label)
        elif level == "prompt" and passage.prompt_label is not None:
            keys.append((passage.id, 0))
            values.append(passage.prompt_label)
            degree = passage.meta.get("unfamiliarity")
            graded.append(float(degree) if isinstance(degree, int | float) else passage.prompt_label)
    labels = np.asarray(values, dtype=np.float64)
    return UnitLabels(keys, np.asarray(graded, dtype=np.float64), labels > UNSUPPORTED_ABOVE)


def _safe(function: Any, *args: Any) -> float:
    try:
        return float(function(*args))
    except ValueError:  # one class only: undefined
        return float("nan")


def _binary_metrics(
    level: str, y: np.ndarray, labels: np.ndarray, scores: np.ndarray, threshold: float | None
) -> dict[str, float]:
    both = bool(y.any()) and not bool(y.all())
    if level in ("claim", "fact"):
        values = {
            "roc_auc": _safe(roc_auc, y, scores) if both else float("nan"),
            "pr_auc": _safe(average_precision, y, scores) if both else float("nan"),
            "prr": _safe(prediction_rejection_ratio, y, scores) if both else float("nan"),
        }
    elif level == "response":
        values = {
            "roc_auc": _safe(roc_auc, y, scores) if both else float("nan"),
            "ap": _safe(average_precision, y, scores) if both else float("nan"),
            "aucpr": _safe(aucpr_trapezoid, y, scores) if both else float("nan"),
        }
    else:  # prompt
        accuracy, f1 = accuracy_f1(y, scores, threshold) if threshold is not None else (float("nan"),) * 2
        values = {
            "auc": _safe(roc_auc, y, scores) if both else float("nan"),
            "acc": accuracy,
            "f1": f1,
            "pearson": pearson(scores, labels),
        }
    return {f"{level}_{k}": 100.0 * v for k, v in values.items()}


def _binary_intervals(
    level: str, y: np.ndarray, labels: np.ndarray, scores: np.ndarray, clusters: np.ndarray, cfg: ProtocolConfig
) -> dict[str, list[float]]:
    """Bootstrap intervals resampling records (a record's units move together)."""
    names, owner = np.unique(clusters, return_inverse=True)
    weights = bootstrap.resample_weights(len(names), cfg.bootstrap_samples, cfg.seed)[:, owner]
    draws: dict[str, np.ndarray] = {}
    roc = 100.0 * bootstrap.roc_auc(y, scores, weights)
    ap = 100.0 * bootstrap.average_precision(y, scores, weights)
    if level in ("claim", "fact"):
        draws = {"roc_auc": roc, "pr_auc": ap}
    elif level == "response":
        draws = {"roc_auc": roc, "ap": ap, "aucpr": 100.0 * bootstrap.aucpr_trapezoid(y, scores, weights)}
    else:
        draws = {"auc": roc, "pearson": 100.0 * bootstrap.weighted_pearson(scores, labels, weights)}
    return {f"{level}_{k}": list(bootstrap.percentile_interval(v, cfg.ci_level)) for k, v in draws.items()}


def evaluate_binary_level(
    passages: Sequence[Passage],
    frame: pd.DataFrame,
    level: str,
    cfg: ProtocolConfig,
    thresholds: Mapping[str, float] | None = None,
) -> LevelResult | None:
    """Metrics of every variant at a claim / fact / response / prompt level; None when the
    data set labels no unit of that level or the method scores none."""
    truth = unit_labels(passages, level)
    rows = frame[frame["level"] == level]
    if not truth.keys or rows.empty:
        return None
    result = LevelResult(level)
    index = {key: i for i, key in enumerate(truth.keys)}
    for variant in variants(rows):
        chosen = level_rows(frame, variant, level)
        scored = {
            (rid, int(u)): float(s)
            for rid, u, s in zip(chosen["record_id"], chosen["unit_index"], chosen["score"], strict=True)
        }
        present = [key for key in truth.keys if key in scored]
        if not present:
            continue
        rows_index = np.asarray([index[key] for key in present])
        y = truth.positive[rows_index]
        labels = truth.labels[rows_index]
        scores = finite_for_ranking(np.asarray([scored[key] for key in present]))
        clusters = np.asarray([key[0] for key in present])
        threshold = None if thresholds is None else thresholds.get(variant)
        result.metrics[variant] = _binary_metrics(level, y, labels, scores, threshold)
        if cfg.bootstrap_samples > 0:
            result.intervals[variant] = _binary_intervals(level, y, labels, scores, clusters, cfg)
        if y.any() and not y.all():
            result.curves[variant] = {level: pr_curve(y, scores)}
        result.counts = {
            "labelled_units": len(truth.keys),
            "scored_labelled_units": len(present),
            "positives": int(y.sum()),
            "records": len(passages),
        }
        result.random_baseline = {f"{level}_positive_rate": 100.0 * float(y.mean())}
    return result if result.metrics else None


def evaluate_sentence_level(
    passages: Sequence[Passage], frame: pd.DataFrame, cfg: ProtocolConfig
) -> LevelResult | None:
    """The SelfCheckGPT protocol over the sentence-labelled passages; the passage score is the
    variant's ``response`` row, or the mean of its sentence scores when it has none."""
    labelled = [p for p in passages if p.labels is not None]
    rows = frame[frame["level"] == "sentence"]
    if not labelled or rows.empty:
        return None
    result = LevelResult("sentence")
    scored: dict[str, int] = {}
    first: tuple[list[Passage], dict[str, list[float]], dict[str, float]] | None = None
    for variant in variants(rows):
        by_record = sentence_scores(frame, variant)
        passage_level = record_scores(frame, variant, "response")
        if not passage_level:
            passage_level = {rid: float(np.mean(v)) for rid, v in by_record.items() if v}
        # a variant may score a subset of the records (an LLM variant on a stated subset):
        # it is evaluated on the labelled records it scored, and the count says so
        covered = [p for p in labelled if p.id in by_record]
        scored[variant] = len(covered)
        if not covered:
            continue
        metrics, intervals, curves = evaluate_variants(covered, {variant: (by_record, passage_level)}, cfg)
        result.metrics.update(metrics)
        result.intervals.update(intervals)
        result.curves.update(curves)
        if first is None or len(covered) > len(first[0]):
            first = (covered, by_record, passage_level)
    if first is None:
        return None
    result.counts = {
        "labelled_passages": len(labelled),
        "labelled_sentences": sum(len(p.sentences) for p in labelled),
        "unlabelled_passages": len(passages) - len(labelled),
        "records": len(passages),
        "scored_labelled_passages": scored,
    }
    result.random_baseline = random_baseline(align(*first), cfg)
    return result


def evaluate_levels(
    passages: Sequence[Passage],
    frame: pd.DataFrame,
    cfg: ProtocolConfig,
    thresholds: Mapping[str, float] | None = None,
) -> dict[str, LevelResult]:
    """Every level with labels and scores (possibly none)."""
    results: dict[str, LevelResult] = {}
    sentence = evaluate_sentence_level(passages, frame, cfg)
    if sentence is not None:
        results["sentence"] = sentence
    for level in LEVEL_METRICS:
        found = evaluate_binary_level(passages, frame, level, cfg, thresholds)
        if found is not None:
            results[level] = found
    return results
