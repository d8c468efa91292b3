"""The evaluation is total: any subset of units gives, for every metric, a number or a null with
its reason; never an exception. Property-based (Hypothesis): labels, scores (ties, NaN, +/-inf)
and record groupings of every shape, at every level.

Where a metric is defined, its point estimate equals scikit-learn's (or SciPy's); the
vectorised bootstrap equals the loop that resamples records and recomputes.
"""

from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import auc, average_precision_score, precision_recall_curve, roc_auc_score

from hallulab.core.config import typed
from hallulab.core.units import score_frame, unit_id
from hallulab.data.schema import GivenClaim, Record
from hallulab.evaluation import bootstrap, undefined
from hallulab.evaluation.levels import LEVEL_METRICS, LevelResult, evaluate_levels, undefined_report
from hallulab.evaluation.method_metrics import write_method_metrics
from hallulab.evaluation.protocol import (
    METRIC_KEYS,
    LabelledScores,
    ProtocolKnobs,
    align,
    bootstrap_intervals,
    compute_metrics,
    finite_for_ranking,
    task_arrays,
)

INF, NAN = math.inf, math.nan
CFG = ProtocolKnobs(bootstrap_samples=40, seed=3)
# HALLULAB_PROPERTY_EXAMPLES raises the number of generated cases for a deeper search
PROPERTY = settings(
    max_examples=int(os.environ.get("HALLULAB_PROPERTY_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# scores: few distinct values (ties), some unbounded, some NaN (a unit the variant did not score)
SCORES = st.one_of(
    st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]),
    st.floats(-5, 5, allow_nan=False).map(lambda v: round(v, 1)),
    st.sampled_from([INF, -INF, NAN]),
)
LABELS = st.sampled_from([0.0, 0.5, 1.0])
RECORDS = st.lists(st.lists(st.tuples(LABELS, SCORES), min_size=1, max_size=5), max_size=7)


@dataclass(frozen=True)
class Case:
    records: list[Record]
    frame: pd.DataFrame


def _frame(rows: list[tuple[str, str, str, int, float]]) -> pd.DataFrame:
    """A score table straight from rows (variant, level, record, index, score); NaN allowed, as a
    table built outside the methods (the scoring API, a user's own file) may hold it."""
    columns: dict[str, list[object]] = {
        "variant": [],
        "level": [],
        "record_id": [],
        "unit_id": [],
        "unit_index": [],
        "sentence_index": [],
        "start": [],
        "end": [],
        "score": [],
    }
    for variant, level, rid, index, score in rows:
        for name, value in (
            ("variant", variant),
            ("level", level),
            ("record_id", rid),
            ("unit_id", unit_id(rid, level, index)),
            ("unit_index", index),
            ("sentence_index", index if level in ("sentence", "claim") else None),
            ("start", None),
            ("end", None),
            ("score", score),
        ):
            columns[name].append(value)
    return score_frame(columns)


def sentence_case(groups: list[list[tuple[float, float]]], passage_scores: list[float] | None) -> Case:
    records, rows = [], []
    for r, units in enumerate(groups):
        rid = f"r{r}"
        sentences = tuple(f"S{i}." for i in range(len(units)))
        records.append(
            Record(id=rid, response=" ".join(sentences), sentences=sentences, labels=tuple(u[0] for u in units))
        )
        rows.extend(("v", "sentence", rid, i, score) for i, (_, score) in enumerate(units))
        if passage_scores is not None:
            rows.append(("v", "response", rid, 0, passage_scores[r % len(passage_scores)]))
    return Case(records, _frame(rows))


def claim_case(groups: list[list[tuple[float, float]]]) -> Case:
    records, rows = [], []
    for r, units in enumerate(groups):
        rid = f"r{r}"
        claims = tuple(GivenClaim(f"claim {i}", label) for i, (label, _) in enumerate(units))
        records.append(Record(id=rid, response="A.", sentences=("A.",), claims=claims))
        rows.extend(("v", "claim", rid, i, score) for i, (_, score) in enumerate(units))
    return Case(records, _frame(rows))


def record_case(level: str, groups: list[list[tuple[float, float]]]) -> Case:
    """Response or prompt level: one unit per record (the first of each generated group)."""
    records, rows = [], []
    for r, units in enumerate(groups):
        rid, (label, score) = f"r{r}", units[0]
        if level == "response":
            records.append(Record(id=rid, response="A.", sentences=("A.",), response_label=label))
        else:
            records.append(Record(id=rid, response=None, sentences=(), prompt="q", prompt_label=label))
        rows.append(("v", level, rid, 0, score))
    return Case(records, _frame(rows))


def assert_total(results: dict[str, LevelResult]) -> None:
    """Every metric a number or a null with a reason; every interval both bounds or a reason."""
    for result in results.values():
        for variant, values in result.metrics.items():
            reasons = result.reasons.get(variant, {})
            for key, value in values.items():
                assert not math.isinf(value), (variant, key)
                if math.isnan(value):
                    assert reasons.get(key) in undefined.POINT_REASONS, (variant, key, reasons)
                else:
                    assert key not in reasons, (variant, key)
                    bound = 100.0 if "pearson" not in key and "spearman" not in key and "prr" not in key else None
                    if bound is not None:
                        assert -1e-9 <= value <= bound + 1e-9, (variant, key, value)
            for key, interval in result.intervals.get(variant, {}).items():
                if interval.reason is None:
                    assert math.isfinite(interval.low) and math.isfinite(interval.high), (variant, key)
                    assert interval.low <= interval.high + 1e-9
                else:
                    assert interval.reason in undefined.INTERVAL_REASONS
                    assert math.isnan(interval.low) and math.isnan(interval.high)
    report = undefined_report(results)
    nulls = sum(len(r) for res in results.values() for r in res.reasons.values())
    nulls += sum(1 for res in results.values() for i in res.intervals.values() for v in i.values() if v.reason)
    assert sum(report["counts"].values()) == nulls


# -- totality at every level ------------------------------------------------------------------


@PROPERTY
@given(RECORDS, st.none() | st.lists(SCORES, min_size=1, max_size=3))
@example([[(1.0, 0.2), (1.0, 0.9)]], None)  # NonFact* keeps no passage (mean label >= 0.99)
@example([[(0.0, 0.5), (1.0, 0.5)], [(0.5, 0.5)]], None)  # all scores tied
@example([[(0.0, 0.3), (1.0, NAN)]], [NAN])  # one record, NaN scores
@example([], None)  # no record at all
def test_sentence_level_is_total(records: list[list[tuple[float, float]]], passage: list[float] | None) -> None:
    case = sentence_case(records, passage)
    results = evaluate_levels(case.records, case.frame, CFG)
    if records:
        assert set(results["sentence"].metrics["v"]) == set(METRIC_KEYS)
    assert_total(results)


@PROPERTY
@given(RECORDS)
@example([[(0.0, 0.1), (0.0, 0.9)]])  # one class only
@example([[(1.0, INF), (0.0, -INF), (0.0, INF)]])  # unbounded scores
@example([[(0.0, NAN)], [(1.0, NAN)]])  # every labelled unit unscored: no unit
def test_claim_level_is_total(records: list[list[tuple[float, float]]]) -> None:
    case = claim_case(records)
    results = evaluate_levels(case.records, case.frame, CFG)
    if records:
        assert set(results["claim"].metrics["v"]) == set(LEVEL_METRICS["claim"])
    assert_total(results)


@PROPERTY
@given(st.sampled_from(["response", "prompt"]), RECORDS, st.none() | st.floats(-2, 2))
@example("prompt", [[(0.0, 0.4)]], None)  # one record, no threshold
@example("prompt", [[(0.0, 0.1)], [(0.0, 0.2)]], 0.5)  # F1 with no positive label or decision
def test_record_levels_are_total(level: str, records: list[list[tuple[float, float]]], threshold: float | None) -> None:
    case = record_case(level, records)
    thresholds = None if threshold is None else {"v": threshold}
    results = evaluate_levels(case.records, case.frame, CFG, thresholds=thresholds)
    if records:
        assert set(results[level].metrics["v"]) == set(LEVEL_METRICS[level])
    assert_total(results)


def test_a_variant_on_a_subset_leaves_the_others_and_its_own_nulls_written() -> None:
    """An LLM variant scored on one record that the data set does not label, beside a variant
    scored everywhere: both are written; the first is null with reason no_units."""
    case = sentence_case([[(0.0, 0.1), (1.0, 0.8)], [(1.0, 0.7), (0.0, 0.2)]], None)
    extra = _frame([("llm", "sentence", "r9", 0, 0.5)])
    records = [*case.records, Record(id="r9", response="X.", sentences=("X.",))]
    results = evaluate_levels(records, pd.concat([case.frame, extra], ignore_index=True), CFG)
    sentence = results["sentence"]
    assert sentence.metrics["v"]["nonfact_aucpr"] == pytest.approx(100.0)
    assert all(math.isnan(v) for v in sentence.metrics["llm"].values())
    assert set(sentence.reasons["llm"].values()) == {undefined.NO_UNITS}
    assert undefined_report(results)["counts"][undefined.NO_UNITS] == len(METRIC_KEYS)


def test_one_record_gives_a_point_estimate_and_no_interval() -> None:
    case = claim_case([[(0.0, 0.1), (1.0, 0.8), (0.0, 0.3)]])
    result = evaluate_levels(case.records, case.frame, CFG)["claim"]
    assert result.metrics["v"]["claim_roc_auc"] == pytest.approx(100.0)
    assert result.intervals["v"]["claim_roc_auc"].reason == undefined.ONE_RECORD


def test_resamples_that_drop_every_positive_are_left_out_and_counted() -> None:
    case = claim_case([[(1.0, 0.9)], [(0.0, 0.1)], [(0.0, 0.2)], [(0.0, 0.3)]])
    interval = evaluate_levels(case.records, case.frame, CFG)["claim"].intervals["v"]["claim_roc_auc"]
    assert interval.reason is None and 0 < interval.undefined_resamples < CFG.bootstrap_samples
    report = undefined_report({"claim": evaluate_levels(case.records, case.frame, CFG)["claim"]})
    assert report["undefined_resamples"]["v"]["claim_roc_auc"] == interval.undefined_resamples


# -- point estimates against scikit-learn / SciPy -----------------------------------------------


@PROPERTY
@given(RECORDS)
def test_sentence_point_estimates_equal_sklearn_where_defined(records: list[list[tuple[float, float]]]) -> None:
    case = sentence_case(records, None)
    labelled = list(case.records)
    by_record = {p.id: [u[1] for u in units] for p, units in zip(labelled, records, strict=True)}
    with np.errstate(invalid="ignore"):  # +inf and -inf in one record: a NaN passage score
        means = {rid: float(np.mean(v)) for rid, v in by_record.items()}
    data = align(labelled, by_record, means)
    metrics = compute_metrics(data, CFG)
    for task in ("nonfact", "nonfact_star", "factual"):
        y, s = task_arrays(data, task, CFG)
        if undefined.ranking(y) is None:
            precision, recall, _ = precision_recall_curve(y, s)
            assert metrics[f"{task}_aucpr"] == pytest.approx(100 * auc(recall, precision), abs=1e-9)
        else:
            assert math.isnan(metrics[f"{task}_aucpr"])
    y, s = task_arrays(data, "nonfact", CFG)
    if undefined.ranking(y) is None:
        assert metrics["roc_auc"] == pytest.approx(100 * roc_auc_score(y, s), abs=1e-9)
        assert metrics["avg_precision"] == pytest.approx(100 * average_precision_score(y, s), abs=1e-9)
    keep = ~np.isnan(data.passage_scores)
    x, labels = data.passage_scores[keep], data.passage_labels[keep]
    if undefined.correlation(x, labels) is None:
        assert metrics["passage_pearson"] == pytest.approx(100 * pearsonr(x, labels)[0], abs=1e-7)
        assert metrics["passage_spearman"] == pytest.approx(100 * spearmanr(x, labels)[0], abs=1e-7)
    else:
        assert math.isnan(metrics["passage_pearson"]) and math.isnan(metrics["passage_spearman"])


@PROPERTY
@given(RECORDS)
def test_claim_point_estimates_equal_sklearn_where_defined(records: list[list[tuple[float, float]]]) -> None:
    case = claim_case(records)
    results = evaluate_levels(case.records, case.frame, CFG)
    units = [u for group in records for u in group if not math.isnan(u[1])]
    y = np.asarray([label > 0.499 for label, _ in units], dtype=bool)
    s = finite_for_ranking(np.asarray([score for _, score in units], dtype=np.float64))
    if not units:
        assert "claim" not in results or set(results["claim"].reasons["v"].values()) == {undefined.NO_UNITS}
        return
    metrics = results["claim"].metrics["v"]
    if undefined.ranking(y) is None:
        assert metrics["claim_roc_auc"] == pytest.approx(100 * roc_auc_score(y, s), abs=1e-9)
        assert metrics["claim_pr_auc"] == pytest.approx(100 * average_precision_score(y, s), abs=1e-9)
    else:
        assert all(math.isnan(v) for v in metrics.values())


# -- the vectorised bootstrap against the resampling loop ----------------------------------------


def _loop_sentence_intervals(data: LabelledScores, cfg: ProtocolKnobs) -> dict[str, tuple[float, float]]:
    """The definition: draw passages with replacement, rebuild the data, recompute."""
    rng = np.random.default_rng(cfg.seed)
    n = len(data.passage_labels)
    draws: dict[str, list[float]] = {key: [] for key in METRIC_KEYS}
    for _ in range(cfg.bootstrap_samples):
        chosen = rng.integers(0, n, n)
        index = np.concatenate([np.flatnonzero(data.sentence_passage == p) for p in chosen])
        owner = np.concatenate([np.full((data.sentence_passage == p).sum(), i) for i, p in enumerate(chosen)])
        sample = LabelledScores(
            data.sentence_labels[index],
            data.sentence_scores[index],
            owner,
            data.passage_labels[chosen],
            data.passage_scores[chosen],
        )
        for key, value in compute_metrics(sample, cfg).items():
            draws[key].append(value)
    return {key: bootstrap.percentile_interval(np.asarray(v), cfg.ci_level) for key, v in draws.items()}


@PROPERTY
@given(
    st.lists(st.lists(st.tuples(LABELS, SCORES), min_size=1, max_size=4), min_size=2, max_size=6),
    st.lists(SCORES, min_size=1, max_size=3),
)
def test_vectorised_bootstrap_equals_the_loop_on_any_shape(
    records: list[list[tuple[float, float]]], passage: list[float]
) -> None:
    by_record = {f"r{r}": [u[1] for u in units] for r, units in enumerate(records)}
    case = sentence_case(records, passage)
    data = align(case.records, by_record, {f"r{r}": passage[r % len(passage)] for r in range(len(records))})
    fast = bootstrap_intervals(data, CFG)
    slow = _loop_sentence_intervals(data, CFG)
    for key, (low, high) in slow.items():
        if fast[key].reason is None:
            assert fast[key].low == pytest.approx(low, abs=1e-9), key
            assert fast[key].high == pytest.approx(high, abs=1e-9), key


# -- a method's evaluation on a subset that used to crash it -------------------------------------


def test_the_evaluation_writes_every_variant_with_nulls_and_reasons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FactSelfCheck's LLM variants on one record whose mean label is >= 0.99: NonFact* keeps no
    sentence of theirs. The evaluation (the second half of a method's aggregate stage) writes the
    variant scored everywhere with numbers and the subset variant with nulls, and counts the
    reasons in .info.json."""
    records = [[(1.0, 0.9), (1.0, 0.8)], [(0.0, 0.1), (1.0, 0.7)], [(0.0, 0.2), (0.5, 0.6)]]
    case = sentence_case(records, None)
    subset = _frame([("llm", "sentence", "r0", i, score) for i, score in enumerate((0.4, 0.6))])
    frame = pd.concat([case.frame, subset], ignore_index=True)
    (tmp_path / "data/aggregated/ds").mkdir(parents=True)
    frame.to_parquet(tmp_path / "data/aggregated/ds/factselfcheck.parquet")
    (tmp_path / "data/aggregated/ds/factselfcheck.diagnostics.json").write_text("{}", encoding="utf-8")
    (tmp_path / "data/aggregated/ds/factselfcheck.controls.json").write_text("{}", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    cfg = typed(ProtocolKnobs, {"bootstrap_samples": 50}, "evaluate")
    write_method_metrics("factselfcheck", "ds", list(case.records), cfg, logging.getLogger("test"))
    metrics = json.loads((tmp_path / "metrics/ds/factselfcheck.json").read_text(encoding="utf-8"))
    info = json.loads((tmp_path / "metrics/ds/factselfcheck.info.json").read_text(encoding="utf-8"))
    assert metrics["v"]["nonfact_aucpr"] is not None and metrics["v"]["roc_auc"] is not None
    assert metrics["llm"]["nonfact_star_aucpr"] is None and metrics["llm"]["nonfact_aucpr"] is None
    reasons = info["undefined"]["metrics"]["llm"]
    assert reasons["nonfact_star_aucpr"] == undefined.NO_UNITS and reasons["nonfact_aucpr"] == undefined.ONE_CLASS
    assert info["undefined"]["intervals"]["llm"]["roc_auc"] == undefined.ONE_CLASS
    assert info["undefined"]["counts"][undefined.NO_UNITS] >= 2
