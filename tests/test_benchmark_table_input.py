"""`python -m hallulab.benchmark table` refuses a units file it cannot take whole, in one line
naming it (exit status 2), instead of a traceback or a quietly different table: bytes that are
not UTF-8, a deleted or emptied file of a cell that ran (its results or cost file is there), a
unit listed twice (its cost per unit halved), a score that is not a finite number (a NaN moved the
ROC-AUC). On copies of two committed cells in a temporary checkout."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from hallulab.benchmark import table_file
from hallulab.benchmark.__main__ import main as benchmark_main
from hallulab.benchmark.applicability import applicability, benchmark_datasets
from hallulab.benchmark.runs import BenchmarkSettings, CellRun, cell_runs

REPO = Path(__file__).resolve().parents[1]
RUNS = {run.key: run for run in cell_runs(applicability(), benchmark_datasets(), BenchmarkSettings.load())}
CELLS = ("nq_open/length", "nq_open/selfcheck_ngram")
DAMAGED = RUNS[CELLS[1]]


def _checkout(tmp_path: Path) -> Path:
    work = tmp_path / "checkout"
    for key in CELLS:
        run = RUNS[key]
        for source in (run.results_file(REPO), run.units_file(REPO), run.cost_file(REPO)):
            target = work / source.relative_to(REPO)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    (work / "params.yaml").write_bytes((REPO / "params.yaml").read_bytes())
    return work


def _table(work: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = benchmark_main(["--root", str(work), "table"])
    return status, capsys.readouterr().err


def _units(work: Path) -> Path:
    return DAMAGED.units_file(work)


def _lines(work: Path) -> list[str]:
    return _units(work).read_text(encoding="utf-8").splitlines(keepends=True)


def _non_utf8(work: Path) -> None:
    _units(work).write_bytes(_units(work).read_bytes() + b"ngram_n1_max,nq_open-999,0,1,0.5\xff\n")


def _emptied(work: Path) -> None:
    _units(work).write_text("")


def _header_only(work: Path) -> None:
    _units(work).write_text("".join(_lines(work)[:2]))


def _duplicated(work: Path) -> None:
    lines = _lines(work)
    _units(work).write_text("".join(lines + lines[2:]))


def _nan(work: Path) -> None:
    lines = _lines(work)
    variant, record, unit, positive, _ = lines[2].rstrip("\n").split(",")
    lines[2] = f"{variant},{record},{unit},{positive},nan\n"
    _units(work).write_text("".join(lines))


def _deleted(work: Path) -> None:
    _units(work).unlink()


def _deleted_results_gone_cost_kept(work: Path) -> None:
    _units(work).unlink()
    DAMAGED.results_file(work).unlink()


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (_non_utf8, "is not UTF-8 text"),
        (_emptied, "empty"),
        (_header_only, "no units"),
        (_duplicated, "is listed twice"),
        (_nan, "score 'nan' is not a finite number"),
        (_deleted, "missing, though results/nq_open/benchmark_selfcheck_ngram.json says the cell ran"),
        (_deleted_results_gone_cost_kept, "missing, though results/benchmark/nq_open/selfcheck_ngram.cost.json"),
    ],
)
def test_a_damaged_or_missing_units_file_is_refused_in_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: Callable[[Path], None], says: str
) -> None:
    work = _checkout(tmp_path)
    damage(work)
    status, err = _table(work, capsys)
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert str(_units(work)) in err and says in err
    assert not (work / table_file.TABLE_FILE).exists()


def test_the_undamaged_copies_make_a_table_with_both_cells(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = _checkout(tmp_path)
    assert _table(work, capsys)[0] == 0
    rows = json.loads((work / table_file.TABLE_FILE).read_text())["columns"]["nq_open"]["rows"]
    assert any(key.startswith("length") for key in rows) and any(key.startswith("selfcheck_ngram") for key in rows)


def test_a_cell_not_run_needs_no_units_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = _checkout(tmp_path)
    run: CellRun = DAMAGED
    for path in (run.units_file(work), run.results_file(work), run.cost_file(work)):
        path.unlink()
    assert _table(work, capsys)[0] == 0


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ("ngram_n1_max,nq_open-000,0,0,abc", "line 3: score 'abc' is not a number"),
        ("ngram_n1_max,nq_open-000,0,0,", "line 3: score '' is not a number"),
        ("ngram_n1_max,nq_open-000,first,0,0.5", "line 3: unit 'first' is not a whole number"),
        ("ngram_n1_max,nq_open-000,0", "line 3: 3 fields, not the 5 of variant,record,unit,positive,score"),
    ],
)
def test_a_units_row_that_is_no_unit_names_its_line_and_field(tmp_path: Path, row: str, says: str) -> None:
    """A score or unit index that is no number, or a row cut short, is named by its field (it
    was Python's own ValueError text: 'could not convert string to float')."""
    from hallulab.benchmark.units import read_units
    from hallulab.core.config import ConfigError

    path = tmp_path / "cell.units.csv"
    path.write_text(f"# level: response\nvariant,record,unit,positive,score\n{row}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        read_units(path)
    assert str(refused.value) == f"{path}: {says}: run the cell again"
