"""``hallulab data add NAME FILE``: a labelled JSONL file of one's own as a data set of a
checkout, and so a column of the benchmark table (``make benchmark DATASET=NAME``).

The committed example (``examples/nq_open_60.jsonl``: NQ-open records with their samples and
labels, without SAC3's fields) is added to a copy of the checkout's configs; its column must
have exactly the cells of the table's own NQ-open column, at the same levels, except SAC3's
(which reads the SAC3 fields the example does not carry), and the ensemble's candidates must be
NQ-open's less SAC3-Q. A wrong provision (a level, a need) or a wrong composition changes one
of those cells, so the check can fail. Files no column can be computed from are refused before
anything is written.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hallulab.benchmark.__main__ import main as benchmark_main
from hallulab.benchmark.applicability import applicability, benchmark_datasets
from hallulab.cli import main as cli_main
from hallulab.core.config import CONF_DIR, compose
from tests.workspace import environment

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "nq_open_60.jsonl"
HALLULAB = Path(sys.executable).with_name("hallulab")


def _checkout(tmp_path: Path) -> Path:
    """A checkout's configs (what ``data add`` writes to and the table reads) in ``tmp_path``."""
    shutil.copytree(CONF_DIR, tmp_path / "conf")
    (tmp_path / "data").mkdir()
    return tmp_path


def _add(checkout: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(HALLULAB), "data", "add", *args, "--checkout", str(checkout)],
        cwd=checkout,
        env=environment(),
        capture_output=True,
        text=True,
    )


def test_an_added_file_is_a_column_with_nq_opens_cells_but_sac3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkout = _checkout(tmp_path)
    shutil.copy(EXAMPLE, checkout / "data" / "mine.jsonl")
    done = _add(checkout, "mine", "data/mine.jsonl")
    assert done.returncode == 0, done.stderr
    assert "make benchmark DATASET=mine" in done.stdout
    params = compose(["dataset=mine"], checkout / "conf")
    # the path is the checkout's own (it travels with a clone), the loader the jsonl config's
    assert (params["dataset"]["loader"], params["dataset"]["path"]) == ("jsonl", "data/mine.jsonl")
    columns = {d.name: d for d in benchmark_datasets(conf_dir=checkout / "conf")}
    assert "mine" in columns and "nq_open" in columns
    own = {c.method: c for c in applicability(datasets=[columns["mine"]])}
    nq_open = {c.method: c for c in applicability(datasets=[columns["nq_open"]])}
    assert own["sac3"].reason == "needs the data set's SAC3 verifier outputs"
    assert {m: c.levels for m, c in own.items() if m != "sac3"} == {
        m: c.levels for m, c in nq_open.items() if m != "sac3"
    }
    assert sum(c.applies for c in own.values()) >= 20
    candidates = [m.key for m in columns["nq_open"].combinations["ensemble"].members if m.method != "sac3"]
    assert [m.key for m in columns["mine"].combinations["ensemble"].members] == candidates
    # the table lists the column's cells, each with the command that fills it
    assert benchmark_main(["--root", str(checkout), "list", "--dataset", "mine"]) == 0
    listed = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert {row[0] for row in listed} == {f"mine/{method}" for method in own}
    assert all(row[0].startswith("mine/") for row in listed)
    length = next(row for row in listed if row[0] == "mine/length")
    assert length[1:3] == ["to run", 'make result DATASET=mine METHOD=length NAME=benchmark_length ARGS=""']
    # make benchmark-list DATASET=mine and make benchmark DATASET=mine hand the column on
    for target in ("benchmark-list", "benchmark"):
        planned = subprocess.run(["make", "-n", target, "DATASET=mine"], cwd=REPO, capture_output=True, text=True)
        assert "-m hallulab.benchmark" in planned.stdout and "--dataset mine" in planned.stdout, planned


def _add_here(checkout: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """The command in this process (its refusals happen before any model loads)."""
    code = cli_main(["data", "add", *args, "--checkout", str(checkout)])
    return code, capsys.readouterr().err


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_file_no_column_can_come_from_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkout = _checkout(tmp_path)
    records = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()[:6]]
    one_class = _write(tmp_path / "one.jsonl", [{**r, "response_label": 1.0} for r in records])
    unlabelled = _write(
        tmp_path / "none.jsonl", [{k: v for k, v in r.items() if k != "response_label"} for r in records]
    )
    bad = _write(tmp_path / "bad.jsonl", [records[0], {**records[1], "samples": "one string"}])
    for file, expected in (
        (one_class, "field 'response_label': every response unit is of one class (6 hallucinated, 0 not)"),
        (unlabelled, "no labels"),
        (bad, "field 'samples'"),
    ):
        code, err = _add_here(checkout, capsys, "mine", str(file))
        assert code == 2 and expected in err and str(file.name) in err, err
        assert len(err.strip().splitlines()) == 1, err
        assert not (checkout / "conf" / "dataset" / "mine.yaml").exists()
    # an existing data set is never overwritten, and a name that is no plain word is refused
    before = (checkout / "conf" / "dataset" / "nq_open.yaml").read_text()
    for name, expected in (("nq_open", "exists"), ("My Data", "lower-case")):
        code, err = _add_here(checkout, capsys, name, str(EXAMPLE))
        assert code == 2 and expected in err, err
    assert (checkout / "conf" / "dataset" / "nq_open.yaml").read_text() == before
