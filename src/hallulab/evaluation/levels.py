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
  the method chose without test labels (its basic records), ACC, F1 with familiar as the
  positive class (Table 2 and the released code) and, labelled, F1 of the unfamiliar class;
  Pearson (Table 2's PEA) between the score and the annotated degree of unfamiliarity
  (``meta.unfamiliarity``, from the 1-9 rating) when the record has one, else the binary label.

Every metric is in percent (the papers' unit) with a percentile bootstrap interval that
resamples records. The evaluation is total on any subset: a metric undefined on the data
(no unit, one class only, a constant side of a correlation, no threshold) is NaN, never 0, is
written as null, and carries its reason (:mod:`hallulab.evaluation.undefined`); a unit whose
score is NaN is left out and counted. Units of a record without labels are scored but not evaluated; the counts
of labelled and unlabelled records are part of the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from hallulab.core.units import level_rows, record_scores, sentence_scores, variants
from hallulab.data.schema import Record
from hallulab.evaluation import bootstrap, undefined
from hallulab.evaluation.metrics import (
    PRCurve,
    aucpr_trapezoid,
    average_precision,
    f1_score,
    pearson,
    pr_curve,
    prediction_rejection_ratio,
    roc_auc,
)
from hallulab.evaluation.protocol import (
    METRIC_KEYS,
    LabelledScores,
    ProtocolKnobs,
    align,
    evaluate_variant,
    finite_for_ranking,
    random_baseline,
)

UNSUPPORTED_ABOVE = 0.499  # a claim labelled minor or major false is unsupported (positive)

#: Metric keys per level, in output order (sentence keys are the SelfCheckGPT protocol's).
LEVEL_METRICS: dict[str, tuple[str, ...]] = {
    "claim": ("claim_roc_auc", "claim_pr_auc", "claim_prr"),
    "fact": ("fact_roc_auc", "fact_pr_auc", "fact_prr"),
    "response": ("response_roc_auc", "response_ap", "response_aucpr"),
    "prompt": ("prompt_auc", "prompt_acc", "prompt_f1", "prompt_f1_unfamiliar", "prompt_pearson"),
}


@dataclass
class LevelResult:
    """Metrics of every variant at one level: values (NaN where undefined), the reason of every
    NaN (:mod:`hallulab.evaluation.undefined`), bootstrap intervals, PR curves and counts."""

    level: str
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)
    reasons: dict[str, dict[str, str]] = field(default_factory=dict)
    intervals: dict[str, dict[str, bootstrap.Interval]] = field(default_factory=dict)
    curves: dict[str, dict[str, PRCurve]] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    random_baseline: dict[str, float] = field(default_factory=dict)

    def add_uncovered(self, variant: str, keys: Sequence[str]) -> None:
        """A variant that scored no labelled unit of this level: every metric null, ``no_units``."""
        self.metrics[variant] = {key: float("nan") for key in keys}
        self.reasons[variant] = {key: undefined.NO_UNITS for key in keys}


@dataclass(frozen=True)
class UnitLabels:
    """Binary labels of one level's units, keyed by (record id, unit index), with the cluster
    (record) of every unit for the bootstrap."""

    keys: list[tuple[str, int]]
    labels: np.ndarray  # float labels as the data gives them (graded where the data grades them)
    positive: np.ndarray  # bool: the positive class


def unit_labels(records: Sequence[Record], level: str) -> UnitLabels:
    keys: list[tuple[str, int]] = []
    values: list[float] = []
    graded: list[float] = []
    for record in records:
        if level == "claim":
            for index, claim in enumerate(record.claims):
                if claim.label is not None:
                    keys.append((record.id, index))
                    values.append(claim.label)
                    graded.append(claim.label)
        elif level == "response" and record.response_label is not None:
            keys.append((record.id, 0))
            values.append(record.response_label)
            graded.append(record.response_label)
        elif level == "prompt" and record.prompt_label is not None:
            keys.append((record.id, 0))
            values.append(record.prompt_label)
            degree = record.meta.get("unfamiliarity")
            graded.append(float(degree) if isinstance(degree, int | float) else record.prompt_label)
    labels = np.asarray(values, dtype=np.float64)
    return UnitLabels(keys, np.asarray(graded, dtype=np.float64), labels > UNSUPPORTED_ABOVE)


@dataclass(frozen=True)
class Units:
    """One variant's scored, labelled units at a binary level."""

    positive: np.ndarray
    labels: np.ndarray
    scores: np.ndarray
    clusters: np.ndarray


def _rank_metric(metric: Any, units: Units) -> tuple[float, str | None]:
    reason = undefined.ranking(units.positive)
    return (float("nan"), reason) if reason else (100.0 * float(metric(units.positive, units.scores)), None)


def _decision_metrics(units: Units, threshold: float | None) -> dict[str, tuple[float, str | None]]:
    """ACC and F1 of the decision "unfamiliar" = ``score > threshold`` (the method's own
    threshold; none chosen: null). ``f1`` takes *familiar* as the positive class, as
    Self-Familiarity's Table 2 and its released code do (the rows where a model answers
    everything have F1 0 only that way); ``f1_unfamiliar`` is the other class's F1."""
    keys = ("acc", "f1", "f1_unfamiliar")
    if threshold is None:
        return {key: (float("nan"), undefined.NO_THRESHOLD) for key in keys}
    if units.positive.size == 0:
        return {key: (float("nan"), undefined.NO_UNITS) for key in keys}
    refused = units.scores > threshold
    found: dict[str, tuple[float, str | None]] = {"acc": (100.0 * float((refused == units.positive).mean()), None)}
    for key, truth, decided in (("f1", ~units.positive, ~refused), ("f1_unfamiliar", units.positive, refused)):
        reason = undefined.f1(truth, decided)
        found[key] = (float("nan"), reason) if reason else (100.0 * f1_score(truth, decided), None)
    return found


def binary_metrics(level: str, units: Units, threshold: float | None) -> dict[str, tuple[float, str | None]]:
    """metric -> (value in percent or NaN, reason when NaN) at one binary level."""
    if level in ("claim", "fact"):
        values = {
            "roc_auc": _rank_metric(roc_auc, units),
            "pr_auc": _rank_metric(average_precision, units),
            "prr": _rank_metric(prediction_rejection_ratio, units),
        }
    elif level == "response":
        values = {
            "roc_auc": _rank_metric(roc_auc, units),
            "ap": _rank_metric(average_precision, units),
            "aucpr": _rank_metric(aucpr_trapezoid, units),
        }
    else:  # prompt
        why = undefined.correlation(units.scores, units.labels)
        values = {
            "auc": _rank_metric(roc_auc, units),
            **_decision_metrics(units, threshold),
            "pearson": (float("nan"), why) if why else (100.0 * pearson(units.scores, units.labels), None),
        }
    return {f"{level}_{k}": v for k, v in values.items()}


def binary_draws(level: str, units: Units, weights: np.ndarray) -> dict[str, np.ndarray]:
    """The rank metrics of a binary level (percent) on each resample, given the units'
    (B, units) multiplicities; the decision metrics (ACC, F1) have no draws."""
    y, scores = units.positive, units.scores
    roc = 100.0 * bootstrap.roc_auc(y, scores, weights)
    ap = 100.0 * bootstrap.average_precision(y, scores, weights)
    if level in ("claim", "fact"):
        draws = {"roc_auc": roc, "pr_auc": ap}
    elif level == "response":
        draws = {"roc_auc": roc, "ap": ap, "aucpr": 100.0 * bootstrap.aucpr_trapezoid(y, scores, weights)}
    else:
        draws = {"auc": roc, "pearson": 100.0 * bootstrap.weighted_pearson(scores, units.labels, weights)}
    return {f"{level}_{k}": v for k, v in draws.items()}


def _binary_intervals(
    level: str, units: Units, reasons: Mapping[str, str], cfg: ProtocolKnobs
) -> dict[str, bootstrap.Interval]:
    """Bootstrap intervals resampling records (a record's units move together)."""
    names, owner = np.unique(units.clusters, return_inverse=True)
    weights = bootstrap.resample_weights(len(names), cfg.bootstrap_samples, cfg.seed)[:, owner]
    return {
        key: bootstrap.summarise(draws, cfg.ci_level, reasons.get(key), len(names))
        for key, draws in binary_draws(level, units, weights).items()
    }


def units_of(truth: UnitLabels, chosen: pd.DataFrame, keys: set[tuple[str, int]]) -> Units:
    """The labelled units among ``keys`` (record id, unit index) that ``chosen`` scored with a
    number, in the data set's unit order (two variants restricted to the same keys line up)."""
    subset = chosen[[(rid, int(u)) in keys for rid, u in zip(chosen["record_id"], chosen["unit_index"], strict=True)]]
    return _variant_units(truth, subset)[0]


def _variant_units(truth: UnitLabels, chosen: pd.DataFrame) -> tuple[Units, int]:
    """The labelled units a variant scored (a NaN score is a unit it did not score), and how
    many of its labelled units had a NaN score."""
    scored = {
        (rid, int(u)): float(s)
        for rid, u, s in zip(chosen["record_id"], chosen["unit_index"], chosen["score"], strict=True)
    }
    index = {key: i for i, key in enumerate(truth.keys)}
    labelled = [key for key in truth.keys if key in scored]
    present = [key for key in labelled if not np.isnan(scored[key])]
    rows = np.asarray([index[key] for key in present], dtype=np.int64)
    units = Units(
        positive=truth.positive[rows],
        labels=truth.labels[rows],
        scores=finite_for_ranking(np.asarray([scored[key] for key in present], dtype=np.float64)),
        clusters=np.asarray([key[0] for key in present], dtype=object),
    )
    return units, len(labelled) - len(present)


def evaluate_binary_level(
    records: Sequence[Record],
    frame: pd.DataFrame,
    level: str,
    cfg: ProtocolKnobs,
    thresholds: Mapping[str, float] | None = None,
) -> LevelResult | None:
    """Metrics of every variant at a claim / fact / response / prompt level; None when the
    data set labels no unit of that level or the method scores no unit of it. A variant that
    scored none of the labelled units gets null metrics (reason ``no_units``)."""
    truth = unit_labels(records, level)
    rows = frame[frame["level"] == level]
    if not truth.keys or rows.empty:
        return None
    result = LevelResult(level)
    scored_units: dict[str, int] = {}
    positives: dict[str, int] = {}
    nan_scores: dict[str, int] = {}
    widest: Units | None = None
    for variant in variants(rows):
        units, nan_scores[variant] = _variant_units(truth, level_rows(frame, variant, level))
        scored_units[variant] = len(units.scores)
        positives[variant] = int(units.positive.sum())
        if len(units.scores) == 0:
            result.add_uncovered(variant, LEVEL_METRICS[level])
            continue
        threshold = None if thresholds is None else thresholds.get(variant)
        found = binary_metrics(level, units, threshold)
        result.metrics[variant] = {key: value for key, (value, _) in found.items()}
        result.reasons[variant] = {key: reason for key, (_, reason) in found.items() if reason is not None}
        if cfg.bootstrap_samples > 0:
            result.intervals[variant] = _binary_intervals(level, units, result.reasons[variant], cfg)
        if undefined.ranking(units.positive) is None:
            result.curves[variant] = {level: pr_curve(units.positive, units.scores)}
        if widest is None or len(units.scores) > len(widest.scores):
            widest = units
    widest_scored = len(widest.scores) if widest is not None else 0
    result.counts = {
        "labelled_units": len(truth.keys),
        "scored_labelled_units": widest_scored,
        "positives": int(widest.positive.sum()) if widest is not None else 0,
        "records": len(records),
        "scored_labelled_units_by_variant": scored_units,
        "positives_by_variant": positives,
        "nan_scores_left_out": {v: n for v, n in nan_scores.items() if n},
    }
    if widest is not None:
        result.random_baseline = {f"{level}_positive_rate": 100.0 * float(widest.positive.mean())}
    return result


def passage_scores(frame: pd.DataFrame, variant: str, by_record: Mapping[str, list[float]]) -> dict[str, float]:
    """A variant's passage scores: its ``response`` rows, or the mean of each record's
    sentence scores (``by_record``) when it has none."""
    found = record_scores(frame, variant, "response")
    if not found:
        with np.errstate(invalid="ignore"):  # +inf and -inf in one record: NaN, left out and counted
            found = {rid: float(np.mean(v)) for rid, v in by_record.items() if v}
    return found


def evaluate_sentence_level(records: Sequence[Record], frame: pd.DataFrame, cfg: ProtocolKnobs) -> LevelResult | None:
    """The SelfCheckGPT protocol over the sentence-labelled passages; the passage score is the
    variant's ``response`` row, or the mean of its sentence scores when it has none."""
    labelled = [p for p in records if p.labels is not None]
    rows = frame[frame["level"] == "sentence"]
    if not labelled or rows.empty:
        return None
    result = LevelResult("sentence")
    scored: dict[str, int] = {}
    nan_scores: dict[str, int] = {}
    widest: LabelledScores | None = None
    for variant in variants(rows):
        by_record = sentence_scores(frame, variant)
        passage_level = passage_scores(frame, variant, by_record)
        # a variant may score a subset of the records (an LLM variant on a stated subset):
        # it is evaluated on the labelled records it scored, and the count says so
        covered = [p for p in labelled if p.id in by_record]
        scored[variant] = len(covered)
        if not covered:
            result.add_uncovered(variant, METRIC_KEYS)
            continue
        data = align(covered, by_record, passage_level, variant)
        found = evaluate_variant(data, cfg)
        result.metrics[variant] = found.metrics.values
        result.reasons[variant] = found.metrics.reasons
        if found.intervals:
            result.intervals[variant] = found.intervals
        result.curves[variant] = found.curves
        if found.nan_scores:
            nan_scores[variant] = found.nan_scores
        if widest is None or len(covered) > len(widest.passage_labels):
            widest = data
    result.counts = {
        "labelled_passages": len(labelled),
        "labelled_sentences": sum(len(p.sentences) for p in labelled),
        "unlabelled_passages": len(records) - len(labelled),
        "records": len(records),
        "scored_labelled_passages": scored,
        "nan_scores_left_out": nan_scores,
    }
    if widest is not None:
        result.random_baseline = random_baseline(widest, cfg)
    return result


def evaluate_levels(
    records: Sequence[Record],
    frame: pd.DataFrame,
    cfg: ProtocolKnobs,
    thresholds: Mapping[str, float] | None = None,
) -> dict[str, LevelResult]:
    """Every level with labels and scores (possibly none)."""
    results: dict[str, LevelResult] = {}
    sentence = evaluate_sentence_level(records, frame, cfg)
    if sentence is not None:
        results["sentence"] = sentence
    for level in LEVEL_METRICS:
        found = evaluate_binary_level(records, frame, level, cfg, thresholds)
        if found is not None:
            results[level] = found
    return results


def undefined_report(results: Mapping[str, LevelResult]) -> dict[str, Any]:
    """Why every null metric and interval is null, counted by reason, and how many bootstrap
    resamples each interval left out (the ``undefined`` block of ``.info.json``)."""
    metrics: dict[str, dict[str, str]] = {}
    intervals: dict[str, dict[str, str]] = {}
    resamples: dict[str, dict[str, int]] = {}
    for result in results.values():
        for variant, reasons in result.reasons.items():
            if reasons:
                metrics.setdefault(variant, {}).update(reasons)
        for variant, by_metric in result.intervals.items():
            for metric, interval in by_metric.items():
                if interval.reason is not None:
                    intervals.setdefault(variant, {})[metric] = interval.reason
                elif interval.undefined_resamples:
                    resamples.setdefault(variant, {})[metric] = interval.undefined_resamples
    counts: dict[str, int] = {}
    for reasons_of_variant in (*metrics.values(), *intervals.values()):
        for reason in reasons_of_variant.values():
            counts[reason] = counts.get(reason, 0) + 1
    return {
        "counts": dict(sorted(counts.items())),
        "metrics": metrics,
        "intervals": intervals,
        "undefined_resamples": resamples,
    }
