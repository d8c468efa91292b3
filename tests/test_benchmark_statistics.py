"""The benchmark's statistics (hallulab.benchmark.statistics, .units, .table_file, .render): PRR
against a hand-computed case and against resampling, the paired comparison, the units files and
the table file, which is re-derived from the committed units files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hallulab.benchmark import table_file
from hallulab.benchmark.__main__ import main as benchmark_main
from hallulab.benchmark.applicability import applicability, benchmark_datasets
from hallulab.benchmark.render import cell_text
from hallulab.benchmark.runs import BenchmarkSettings, cell_runs
from hallulab.benchmark.statistics import cell_statistics, paired
from hallulab.benchmark.table_file import column_entries, random_scorer
from hallulab.benchmark.units import CellUnits, cell_units, export_cell_units, read_units, write_units
from hallulab.core.config import ConfigError
from hallulab.data.schema import GivenClaim, Record
from hallulab.evaluation import bootstrap, metrics
from hallulab.evaluation.protocol import ProtocolKnobs
from tests.conftest import ToyRun

REPO = Path(__file__).resolve().parents[1]
RUNS = cell_runs(applicability(), benchmark_datasets(), BenchmarkSettings.load())
CFG = ProtocolKnobs()


def test_prr_of_a_hand_computed_case() -> None:
    """y = (1, 0, 1, 0), scores (0.9, 0.1, 0.4, 0.6). Kept after rejecting the most uncertain,
    ascending 0.1 (q 1), 0.4 (q 0), 0.6 (q 1), 0.9 (q 0): means 1, 1/2, 2/3, 1/2, area 2/3.
    Random area 1/2; oracle (both q = 1 first) 1, 1, 2/3, 1/2, area 19/24.
    PRR = (2/3 - 1/2) / (19/24 - 1/2) = 4/7."""
    y = np.array([True, False, True, False])
    scores = np.array([0.9, 0.1, 0.4, 0.6])
    assert metrics.prediction_rejection_ratio(y, scores) == pytest.approx(4 / 7)
    assert bootstrap.prediction_rejection_ratio(y, scores, np.ones((1, 4)))[0] == pytest.approx(4 / 7)
    assert bootstrap.prediction_rejection_ratio(y, -scores, np.ones((1, 4)))[0] < 0  # the ranking reversed


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_weighted_prr_equals_resampling_and_recomputing(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 30
    y = rng.random(n) < 0.4
    scores = np.round(rng.random(n) * 4)  # ties
    owner = rng.integers(0, 9, n)
    names, index = np.unique(owner, return_inverse=True)
    weights = bootstrap.resample_weights(len(names), 40, seed)[:, index]
    found = bootstrap.prediction_rejection_ratio(y, scores, weights)
    for b in range(40):
        drawn = np.repeat(np.arange(n), weights[b].astype(int))
        if len(set(y[drawn])) < 2:
            assert np.isnan(found[b])
        else:
            assert found[b] == pytest.approx(metrics.prediction_rejection_ratio(y[drawn], scores[drawn]), abs=1e-9)


def _units(variant: str, scores: list[float], positive: list[bool], records: list[str] | None = None) -> CellUnits:
    records = records or [f"r{i // 2}" for i in range(len(scores))]
    units = tuple(i % 2 for i in range(len(scores)))
    return CellUnits("response", variant, tuple(records), units, np.array(positive), np.array(scores, dtype=float))


POSITIVE = [True, False] * 20


def test_a_perfect_ranker_beats_a_reversed_one_and_ties_itself() -> None:
    perfect = _units("perfect", [float(p) for p in POSITIVE], POSITIVE)
    reversed_ = _units("reversed", [float(not p) for p in POSITIVE], POSITIVE)
    stats = cell_statistics(perfect, CFG)
    assert stats.metrics["roc_auc"].point == 100.0 and stats.metrics["prr"].point == 100.0
    assert stats.metrics["pr_auc"].point == 100.0 and stats.records == 20 and stats.positives == 20
    comparison = paired(perfect, reversed_, CFG)
    assert comparison.differences["roc_auc"].point == 100.0
    assert comparison.verdict("roc_auc") == "better" and paired(reversed_, perfect, CFG).verdict("prr") == "worse"
    assert paired(perfect, perfect, CFG).verdict("roc_auc") == "tied"


def test_the_paired_comparison_matches_units_by_key_on_the_units_both_scored() -> None:
    """B scores the first five records' units in reverse order: matched by (record, unit), not by
    position. On those ten units A ranks perfectly and B (each unit's score negated) in reverse."""
    perfect = _units("a", [float(p) for p in POSITIVE], POSITIVE)
    shared = list(reversed(range(10)))
    reversed_ = CellUnits(
        "response",
        "b",
        tuple(perfect.records[i] for i in shared),
        tuple(perfect.units[i] for i in shared),
        perfect.positive[shared],
        -perfect.scores[shared],
    )
    comparison = paired(perfect, reversed_, CFG)
    assert comparison.units == 10 and comparison.records == 5
    assert comparison.differences["roc_auc"].point == 100.0 and comparison.differences["prr"].point == 200.0


def _passages() -> list[Record]:
    return [
        Record(
            id=f"p{i}",
            response="A. B.",
            sentences=("A.", "B."),
            labels=(1.0 if i % 2 else 0.0, 0.5),
            claims=(GivenClaim("c", 1.0 if i % 3 else 0.0),),
        )
        for i in range(4)
    ]


def test_cell_units_join_labels_and_scores_hallucinated_positive_nan_left_out() -> None:
    rows = [("v", "sentence", f"p{i}", s, 0.1 * i + s) for i in range(4) for s in range(2)]
    rows.append(("v", "claim", "p1", 0, 0.7))
    frame = pd.DataFrame(rows, columns=["variant", "level", "record_id", "unit_index", "score"])
    frame.loc[(frame["record_id"] == "p3") & (frame["unit_index"] == 1), "score"] = float("nan")
    found = cell_units(_passages(), frame, "sentence", ["v"], CFG)["v"]
    assert len(found.scores) == 7  # p3's second sentence scored NaN: left out
    assert found.keys[:2] == (("p0", 0), ("p0", 1))
    assert found.positive.tolist() == [False, True, True, True, False, True, True]  # 0.5 (minor) is positive
    with pytest.raises(ConfigError, match="no such variant"):
        cell_units(_passages(), frame, "sentence", ["w"], CFG)
    claims = cell_units(_passages(), frame, "claim", ["v"], CFG)["v"]
    assert claims.keys == (("p1", 0),) and claims.positive.tolist() == [True]


def test_a_units_file_round_trips_and_a_damaged_line_is_named(tmp_path: Path) -> None:
    units = _units("v", [0.25, float(np.pi), -1.0, 2.0], [True, False, False, True])
    path = tmp_path / "cell.units.csv"
    write_units(path, "response", {"v": units})
    back = read_units(path)["v"]
    assert back.keys == units.keys and back.level == "response"
    assert np.array_equal(back.scores, units.scores) and np.array_equal(back.positive, units.positive)
    path.write_text(path.read_text().replace("2.0", "two"))
    with pytest.raises(ConfigError, match=r"cell.units.csv: line 6: score 'two' is not a number"):
        read_units(path)


def test_cell_marks_best_tied_and_below_the_baseline() -> None:
    entry = {
        "level": "response",
        "metrics": {"roc_auc": [70.04, 60.0, 80.0]},
        "vs_best": {"roc_auc": {"verdict": "tied"}},
        "vs_baseline": {"roc_auc": {"verdict": "tied"}},
    }
    assert cell_text(entry, "roc_auc", "m/best", "m/v", show_level=False) == "≈ 70.0 [60.0, 80.0] †"
    best = dict(entry, vs_best={}, vs_baseline={"roc_auc": {"verdict": "better"}})
    assert cell_text(best, "roc_auc", "m/v", "m/v", show_level=True) == "**70.0** [60.0, 80.0] (response)"


def test_an_undefined_comparison_marks_nothing() -> None:
    entry = {
        "level": "response",
        "metrics": {"prr": [12.0, None, None]},
        "vs_best": {"prr": {"verdict": "undefined"}},
        "vs_baseline": {"prr": {"verdict": "undefined"}},
    }
    assert cell_text(entry, "prr", "m/best", "m/v", show_level=False) == "12.0"


def test_a_column_names_its_best_per_metric_compares_with_it_and_with_the_baseline() -> None:
    perfect = _units("perfect", [float(p) for p in POSITIVE], POSITIVE)
    noisy = _units("noisy", list(np.random.default_rng(5).random(40)), POSITIVE)
    column = column_entries({"a/perfect": perfect, "length/n": noisy}, ["length/n"], CFG)
    assert column.best == {"response": {"roc_auc": "a/perfect", "pr_auc": "a/perfect", "prr": "a/perfect"}}
    assert column.baseline == {"response": "length/n"}
    assert column.entries["a/perfect"].vs_best == {}  # the best is not compared with itself
    assert column.entries["a/perfect"].vs_baseline["roc_auc"].comparison.verdict("roc_auc") == "better"
    assert column.entries["length/n"].vs_best["prr"].row == "a/perfect" and column.entries["length/n"].vs_baseline == {}
    assert random_scorer(column.entries.values(), "response") == {"roc_auc": 50.0, "pr_auc": 50.0, "prr": 0.0}


def test_the_committed_table_file_is_what_its_command_writes_from_the_units_files(tmp_path: Path) -> None:
    committed = json.loads((REPO / table_file.TABLE_FILE).read_text(encoding="utf-8"))
    work = tmp_path / "checkout"
    (work / "results").mkdir(parents=True)
    for run in RUNS:
        for source in (run.results_file(REPO), run.units_file(REPO), run.cost_file(REPO), run.member_units_file(REPO)):
            if source.is_file():
                target = work / source.relative_to(REPO)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(source.read_bytes())
    (work / "params.yaml").write_bytes((REPO / "params.yaml").read_bytes())
    assert benchmark_main(["--root", str(work), "table"]) == 0
    assert json.loads((work / table_file.TABLE_FILE).read_text(encoding="utf-8")) == committed
    filled = [key for column in committed["columns"].values() for key in column["rows"]]
    assert filled, "the committed table has no filled cell"


def test_every_filled_cell_of_the_committed_table_has_three_metrics_and_its_comparisons() -> None:
    committed = json.loads((REPO / table_file.TABLE_FILE).read_text(encoding="utf-8"))
    for dataset, column in committed["columns"].items():
        for key, entry in column["rows"].items():
            assert set(entry["metrics"]) == {"roc_auc", "pr_auc", "prr"}, (dataset, key)
            best = column["best"][entry["level"]]
            for metric, versus in entry["vs_best"].items():
                assert versus["row"] == best[metric] != key
            baseline = column["baseline"].get(entry["level"])
            if baseline is not None and baseline != key:
                assert set(entry["vs_baseline"]) == {"roc_auc", "pr_auc", "prr"}, (dataset, key)
                assert {v["row"] for v in entry["vs_baseline"].values()} == {baseline}


def test_a_cells_units_from_the_toy_run_give_the_evaluations_roc_auc_and_average_precision(
    toy_run: ToyRun, tmp_path: Path
) -> None:
    """The units a cell keeps, read back from the toy run's workspace, reproduce what the evaluate
    stage wrote for the same level: the sentence-level ROC-AUC and average precision (NonFact
    positive) of every n-gram variant."""
    destination = tmp_path / "ngram.units.csv"
    count = export_cell_units("toy", "selfcheck_ngram", ("sentence", "passage"), (), destination, toy_run.root)
    evaluated = json.loads((toy_run.root / "metrics/toy/selfcheck_ngram.json").read_text(encoding="utf-8"))
    found = read_units(destination)
    assert count > 0 and set(found) == set(evaluated)
    for variant, units in found.items():
        stats = cell_statistics(units, CFG)
        assert stats.metrics["roc_auc"].point == pytest.approx(evaluated[variant]["roc_auc"], abs=1e-4), variant
        assert stats.metrics["pr_auc"].point == pytest.approx(evaluated[variant]["avg_precision"], abs=1e-4), variant
