"""The ensemble: its logistic regression against scikit-learn's, the ranks it averages, that
cross-fitting never lets a unit's own label reach its score, and the member contract's errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from hallulab.core.config import ConfigError
from hallulab.core.units import ScoreTable
from hallulab.data.schema import Record
from hallulab.methods.ensemble.aggregate import aggregate, cross_fit, rank_matrix, record_folds, unit_positives
from hallulab.methods.ensemble.knobs import EnsembleKnobs
from hallulab.methods.ensemble.logistic import fit_logistic
from hallulab.pipeline.context import AggregateContext
from hallulab.pipeline.members import AbsentVariant, Member, MemberError, parse_members, select_member
from hallulab.pipeline.params import ParamsView


@pytest.mark.parametrize("l2", [0.1, 1.0, 10.0])
def test_the_fit_is_the_documented_objectives_optimum(l2: float) -> None:
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(300, 4))
    y = (x @ np.array([2.0, -1.0, 0.5, 0.0]) + rng.normal(scale=0.7, size=300) > 0.7).astype(float)
    ours = fit_logistic(x, y, l2)
    # the gradient of -sum[y log p + (1 - y) log(1 - p)] + (l2 / 2) ||w||^2 vanishes; b is unpenalised
    residual = 1.0 / (1.0 + np.exp(-ours.decision_function(x))) - y
    np.testing.assert_allclose(x.T @ residual + l2 * ours.coef_[0], 0.0, atol=1e-10)
    assert float(np.sum(residual)) == pytest.approx(0.0, abs=1e-10)
    # scikit-learn's default solver (lbfgs) on the same C reaches the same optimum
    theirs = LogisticRegression(C=1.0 / l2, tol=1e-12, max_iter=10_000).fit(x, y)
    np.testing.assert_allclose(ours.coef_[0], theirs.coef_[0], atol=1e-5)
    assert float(ours.intercept_[0]) == pytest.approx(float(theirs.intercept_[0]), abs=1e-5)


def test_a_non_positive_l2_is_refused() -> None:
    with pytest.raises(ValueError, match="l2 must be > 0"):
        fit_logistic(np.zeros((2, 1)), np.array([0.0, 1.0]), 0.0)


def _table(method_scores: dict[str, list[list[float]]]) -> dict[str, pd.DataFrame]:
    tables = {}
    for key, records in method_scores.items():
        table = ScoreTable()
        for index, scores in enumerate(records):
            table.add_sentences(key.split("/")[1], f"r{index}", scores)
        tables[key] = table.frame()
    return tables


def test_ranks_are_percentiles_with_ties_averaged_and_inf_highest() -> None:
    members = _table({"a/x": [[0.1, float("inf")], [0.1, 0.5]], "b/y": [[3.0, 1.0], [2.0]]})
    matrix = rank_matrix(members)
    assert matrix.units["unit_id"].tolist() == ["r0#sentence0", "r0#sentence1", "r1#sentence0", "r1#sentence1"]
    np.testing.assert_allclose(matrix.ranks[:, 0], [1.5 / 4, 1.0, 1.5 / 4, 3 / 4])
    np.testing.assert_allclose(matrix.ranks[:3, 1], [1.0, 1 / 3, 2 / 3])
    assert np.isnan(matrix.ranks[3, 1])  # b did not score r1's second sentence


def _passages(labels: list[list[float]]) -> list[Record]:
    return [
        Record(id=f"r{i}", response=" ".join(["s."] * len(ls)), sentences=tuple(["s."] * len(ls)), labels=tuple(ls))
        for i, ls in enumerate(labels)
    ]


def test_cross_fitting_keeps_each_records_labels_out_of_its_own_scores() -> None:
    rng = np.random.default_rng(0)
    records = 12
    labels = [[float(v) for v in rng.integers(0, 2, size=4)] for _ in range(records)]
    members = _table({f"m{j}/v": [[float(v) + rng.normal(scale=0.8) for v in ls] for ls in labels] for j in range(3)})
    knobs = EnsembleKnobs(folds=4)
    matrix = rank_matrix(members)
    base = cross_fit(matrix, unit_positives(_passages(labels), "sentence"), knobs)
    assert base is not None and base.folds_one_class == 0 and base.labelled_units == 4 * records
    folds = record_folds([f"r{i}" for i in range(records)], 4, 0)
    flipped = [list(ls) for ls in labels]
    flipped[5] = [1.0 - v for v in flipped[5]]  # record r5's own labels change ...
    other = cross_fit(matrix, unit_positives(_passages(flipped), "sentence"), knobs)
    assert other is not None
    in_fold = (matrix.units["record_id"].map(folds) == folds["r5"]).to_numpy()
    np.testing.assert_array_equal(other.scores[in_fold], base.scores[in_fold])  # ... its fold's scores do not
    assert not np.allclose(other.scores[~in_fold], base.scores[~in_fold])  # the other folds learnt from them


def test_each_fold_is_scored_by_scikit_learns_fit_on_the_other_folds_and_unlabelled_by_the_full_fit() -> None:
    rng = np.random.default_rng(2)
    labels = [[float(v) for v in rng.integers(0, 2, size=3)] for _ in range(10)]
    scored = [*labels, [0.0, 1.0]]  # r10 has no labels: scored by the fit on every labelled record
    members = _table({f"m{j}/v": [[v + rng.normal(scale=0.8) for v in ls] for ls in scored] for j in range(3)})
    records = [*_passages(labels), Record(id="r10", response="s. s.", sentences=("s.", "s."))]
    knobs = EnsembleKnobs(folds=3, l2=2.0)
    matrix = rank_matrix(members)
    fitted = cross_fit(matrix, unit_positives(records, "sentence"), knobs)
    assert fitted is not None and fitted.labelled_units == 30

    def direct(rows: np.ndarray) -> LogisticRegression:  # the parameters logistic.py documents
        documented = LogisticRegression(
            C=1 / 2.0, fit_intercept=True, solver="newton-cholesky", tol=1e-14, max_iter=100
        )
        return documented.fit(matrix.ranks[rows], y[rows])

    positives = unit_positives(records, "sentence")
    y = np.array([positives.get(uid, False) for uid in matrix.units["unit_id"]], dtype=np.float64)
    fold_of = matrix.units["record_id"].map(record_folds([f"r{i}" for i in range(10)], 3, 0)).fillna(-1).to_numpy()
    for fold in range(3):
        model = direct((fold_of != fold) & (fold_of != -1))
        target = fold_of == fold
        np.testing.assert_array_equal(fitted.scores[target], model.decision_function(matrix.ranks[target]))
    full = direct(fold_of != -1)
    np.testing.assert_array_equal(fitted.scores[fold_of == -1], full.decision_function(matrix.ranks[fold_of == -1]))
    assert fitted.weights == {m: round(float(w), 6) for m, w in zip(matrix.members, full.coef_[0], strict=True)}
    assert fitted.intercept == round(float(full.intercept_[0]), 6)


def _view(**ensemble: object) -> ParamsView:
    return ParamsView({"ensemble": ensemble}, ("ensemble",), "aggregate_ensemble")


def test_the_aggregate_step_writes_both_combiners_and_the_full_fit_weights() -> None:
    labels = [[1.0, 0.0, 1.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
    members = _table(
        {"a/x": [[0.9, 0.1, 0.8], [0.2, 0.3], [0.7, 0.2], [0.1, 0.6]], "b/y": [[1, 2, 3], [4, 5], [6, 7], [8, 9]]}
    )
    listed = [{"method": "selfcheck_ngram", "variant": "x"}, {"method": "greybox", "variant": "y"}]
    tables = {f"{m['method']}/{m['variant']}": t for m, t in zip(listed, members.values(), strict=True)}
    ctx = AggregateContext("t", _passages(labels), {}, None, _view(members=listed, folds=2), members=tables)
    result = aggregate(ctx)
    assert set(result.scores["variant"]) == {
        "rank_mean",
        "logistic_cv2",
        "member.selfcheck_ngram.x",  # each member's own scores, for the paired comparison
        "member.greybox.y",
    }
    rank_mean = result.scores[result.scores["variant"] == "rank_mean"]["score"].to_numpy()
    np.testing.assert_allclose(rank_mean, np.nanmean(rank_matrix(tables).ranks, axis=1))
    assert set(result.diagnostics["logistic"]["weights_full_fit"]) == set(tables)  # type: ignore[index]


def test_unlabelled_records_get_the_rank_mean_and_a_stated_skip_of_the_supervised_combiner() -> None:
    records = [Record(id="r0", response="s. s.", sentences=("s.", "s."))]
    tables = _table({"selfcheck_ngram/x": [[0.1, 0.2]]})
    ctx = AggregateContext(
        "t", records, {}, None, _view(members=[{"method": "selfcheck_ngram", "variant": "x"}]), members=tables
    )
    result = aggregate(ctx)
    assert set(result.scores["variant"]) == {"rank_mean", "member.selfcheck_ngram.x"}
    assert "no labelled sentence unit" in str(result.diagnostics["logistic_skipped"])


def test_a_member_absent_under_the_runs_settings_is_left_out_and_named() -> None:
    labels = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]]
    tables = _table({"selfcheck_ngram/x": [[0.9, 0.1], [0.2, 0.8], [0.7, 0.6], [0.1, 0.2]]})
    tables["greybox/y"] = ScoreTable().frame()  # the members stage's empty table: a sweep left it out
    listed = [{"method": "selfcheck_ngram", "variant": "x"}, {"method": "greybox", "variant": "y"}]
    ctx = AggregateContext("t", _passages(labels), {}, None, _view(members=listed, folds=2), members=tables)
    result = aggregate(ctx)
    assert result.diagnostics["members_absent"] == ["greybox/y"]
    assert list(result.diagnostics["members"]) == ["selfcheck_ngram/x"]  # type: ignore[call-overload]
    assert "member.greybox.y" not in set(result.scores["variant"])
    nothing = {"selfcheck_ngram/x": ScoreTable().frame(), "greybox/y": ScoreTable().frame()}
    ctx = AggregateContext("t", _passages(labels), {}, None, _view(members=listed), members=nothing)
    with pytest.raises(MemberError, match="none of"):
        aggregate(ctx)


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ([], "must be a non-empty list"),
        ([{"method": "nope", "variant": "x"}], "ensemble.members[0].method 'nope' is not a registered method"),
        ([{"method": "ensemble", "variant": "x"}], "is not a registered method"),
        ([{"method": "greybox"}], "ensemble.members[0]"),
        ([{"method": "greybox", "variant": "x", "weight": 2}], "unknown setting(s) ['weight']"),
        ([{"method": "greybox", "variant": "x"}] * 2, "greybox/x is listed twice"),
    ],
)
def test_a_bad_member_list_is_one_line_naming_the_setting(value: object, fragment: str) -> None:
    with pytest.raises((MemberError, ConfigError)) as raised:
        parse_members(value, "ensemble.members", "ensemble")
    assert fragment in str(raised.value) and "\n" not in str(raised.value)


def test_a_member_variant_the_method_did_not_write_lists_what_it_did() -> None:
    frame = _table({"greybox/avg_neglogp": [[0.1]]})["greybox/avg_neglogp"]
    with pytest.raises(AbsentVariant, match=r"no variant 'max_entropy'; it has \['avg_neglogp'\]"):
        select_member(frame, Member("greybox", "max_entropy"), "sentence", "greybox.parquet")
    with pytest.raises(
        MemberError, match=r"no 'response' units in greybox.parquet; this variant scores \['sentence'\]"
    ):
        select_member(frame, Member("greybox", "avg_neglogp"), "response", "greybox.parquet")


def _labelled_frame(rng: np.random.Generator, records: int) -> tuple[list[Record], pd.DataFrame]:
    labels = [[float(v) for v in rng.integers(0, 2, size=3)] for _ in range(records)]
    noisy = {
        "good": [[v + rng.normal(scale=0.5) for v in ls] for ls in labels],
        "member.m.worse": [[v + rng.normal(scale=2.0) for v in ls] for ls in labels],
    }
    table = ScoreTable()
    for variant, records_scores in noisy.items():
        for index, scores in enumerate(records_scores):
            table.add_sentences(variant, f"r{index}", scores)
    return _passages(labels), table.frame()


def test_a_paired_difference_is_the_difference_of_the_metrics_with_an_interval_around_it() -> None:
    from hallulab.core.units import sentence_scores
    from hallulab.evaluation.paired import against_members, paired_difference
    from hallulab.evaluation.protocol import ProtocolKnobs, align, compute_metrics

    records, frame = _labelled_frame(np.random.default_rng(1), 40)
    cfg = ProtocolKnobs(bootstrap_samples=200)
    found = paired_difference(records, frame, "sentence", "good", "member.m.worse", cfg)

    def metrics(variant: str) -> dict[str, float]:
        by_record = sentence_scores(frame, variant)
        means = {rid: float(np.mean(v)) for rid, v in by_record.items()}
        return compute_metrics(align(records, by_record, means, variant), cfg)

    good, worse = metrics("good"), metrics("member.m.worse")
    assert found["nonfact_aucpr"].point == pytest.approx(good["nonfact_aucpr"] - worse["nonfact_aucpr"])
    assert found["roc_auc"].low > 0  # the less noisy scorer is better on these 40 records
    same = paired_difference(records, frame, "sentence", "good", "good", cfg)
    assert same["roc_auc"].to_list() == [0.0, 0.0, 0.0]  # the same resamples for both sides
    report = against_members(records, frame, cfg)
    assert list(report["sentence"]) == ["good"] and list(report["sentence"]["good"]) == ["member.m.worse"]
