"""``hallulab benchmark FILE -o DIR``: one labelled JSONL file as a column of the table.

The committed example (``examples/nq_open_60.jsonl``: 60 NQ-open records of SAC3's set with their
samples and labels, re-shaped into the user schema without SAC3's fields) is run from a folder
outside the checkout with every detector that calls no model, and each of its cells is held to
the table's own cell of the same method on NQ-open (``results/benchmark/nq_open/<method>.units.csv``,
made by the DVC pipeline over all 250 records): the units' scores equal, and the statistics
computed on those units by the table's code equal the column's. Sixty records are enough for the
check to fail: any change of a score, a label, a unit's key or the statistics' resampling moves
at least one of the compared numbers. The bad files are refused before any model runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hallulab.benchmark.applicability import cell
from hallulab.benchmark.statistics import cell_statistics
from hallulab.benchmark.units import read_units
from hallulab.calibration.stored import resolve_calibration
from hallulab.cli import main
from hallulab.column.provision import ColumnInputError, records_provision
from hallulab.column.run import ColumnRunner, _calls_a_model, column_settings
from hallulab.core.call_cache import CallCache
from hallulab.data.records import load_jsonl_records
from hallulab.data.schema import Record
from hallulab.evaluation.protocol import ProtocolKnobs
from hallulab.pipeline import registry
from tests.workspace import environment

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "nq_open_60.jsonl"
#: the table's cells of the data set the example was cut from
TABLE_CELLS = REPO / "results" / "benchmark" / "nq_open"


@pytest.fixture(scope="module")
def column_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example's column, as a user runs it from a folder of their own."""
    folder = tmp_path_factory.mktemp("own")
    # the session's call cache (tests/conftest.py): the docs' page runs the same column, and
    # whichever runs second is served the encoder's calls the first one made
    env = environment()
    hallulab = Path(sys.executable).with_name("hallulab")
    done = subprocess.run(
        [str(hallulab), "benchmark", str(EXAMPLE), "-o", "column", "--no-llm"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (folder / "stdout.txt").write_text(done.stdout, encoding="utf-8")
    return folder / "column"


def _cheap_applicable(cache_file: Path) -> set[str]:
    """Every method that applies to the example and calls no model, worked out here from the
    registry and the records, not from the command's output."""
    records = load_jsonl_records(EXAMPLE, None)
    with CallCache(cache_file) as cache:
        runner = ColumnRunner(records, EXAMPLE.stem, column_settings(EXAMPLE, EXAMPLE.stem), [], cache)
    methods = registry.methods()
    found = set()
    for spec in methods.values():
        if _calls_a_model(spec, runner, methods):
            continue
        if spec.combines is not None or cell(spec, runner.dataset(), methods).applies:
            found.add(spec.name)
    return found


def _calls_a_model_by_name(method: str) -> bool:
    """Whether the method's scores come from a model (an encoder's embeddings, say), from its
    declared artifacts' and steps' sections."""
    spec = registry.method(method)
    steps = [spec.aggregate, *([spec.score] if spec.score is not None else [])]
    return any(
        key.split(".")[0] in {"bertscore", "sentence_similarity", "nli"} for step in steps for key in step.params
    )


def test_every_cheap_detector_that_applies_has_a_cell_and_the_table_has_its_shape(column_dir: Path) -> None:
    column = json.loads((column_dir / "column.json").read_text(encoding="utf-8"))
    assert column["records"] == 60 and column["name"] == "nq_open_60"
    methods = {c["method"] for c in column["cells"]}
    assert methods == _cheap_applicable(column_dir.parent / "applicable.sqlite")
    assert {"length", "selfcheck_ngram", "lexical_similarity", "ensemble"} <= methods
    for found in column["cells"]:
        assert found["level"] == "response" and found["units"] == 60 and found["positives"] == 30
        assert set(found["metrics"]) == {"roc_auc", "pr_auc", "prr"}
        assert found["verdict"] in {"valid", "model-limited"} and found["reason"]
        assert (found["versus_length"] is None) == (found["method"] == "length")
    points = [c["metrics"]["roc_auc"][0] for c in column["cells"]]
    assert points == sorted(points, reverse=True)
    assert column["ensemble"]["members"] and all(
        m.split("/")[0] in methods - {"length", "ensemble"} for m in column["ensemble"]["members"]
    )
    table = (column_dir.parent / "stdout.txt").read_text(encoding="utf-8").splitlines()
    assert table[0].split()[:3] == ["detector", "level", "units"]
    assert len([line for line in table if "/" in line.split(" ")[0]]) == len(column["cells"])
    page = (column_dir / "column.md").read_text(encoding="utf-8")
    assert page.startswith("# Which detector on nq_open_60") and "length baseline" in page


def test_the_columns_cells_equal_the_tables_cells_of_the_same_records(column_dir: Path) -> None:
    column = json.loads((column_dir / "column.json").read_text(encoding="utf-8"))
    compared = 0
    for found in column["cells"]:
        if found["method"] == "ensemble":  # the table's NQ-open ensemble has other members
            continue
        mine = read_units(column_dir / "units" / f"{found['method']}.units.csv")[found["variant"]]
        table = read_units(TABLE_CELLS / f"{found['method']}.units.csv")[found["variant"]].restricted_to(mine.keys)
        # bit for bit where no model computes the score; an encoder's float32 (BERTScore's)
        # rounds by CPU kind, so its scores agree to float32 precision, and their ranking,
        # hence every statistic, is the table's
        assert np.allclose(mine.scores, table.scores, rtol=1e-6, atol=1e-6), found["method"]
        if not _calls_a_model_by_name(found["method"]):
            assert np.array_equal(mine.scores, table.scores), found["method"]
        assert np.array_equal(mine.positive, table.positive), found["method"]
        statistics = cell_statistics(table, ProtocolKnobs())
        for metric, estimate in statistics.metrics.items():
            assert found["metrics"][metric] == estimate.to_list(), (found["method"], metric)
        compared += 1
    assert compared >= 4


def test_each_valid_row_has_a_calibration_that_score_takes(column_dir: Path) -> None:
    column = json.loads((column_dir / "column.json").read_text(encoding="utf-8"))
    calibrated = [c for c in column["cells"] if c["calibration"] is not None]
    assert {c["method"] for c in calibrated} >= {"selfcheck_ngram", "lexical_similarity"}
    for found in calibrated:
        stored = resolve_calibration(column_dir / found["calibration"], found["method"])
        assert stored.variant == found["variant"] and stored.level == "response"


def _passage(pid: str, **fields: object) -> dict[str, object]:
    return {"id": pid, "response": "A is B.", "sentences": ["A is B."], "samples": ["A is C."], **fields}


@pytest.mark.parametrize(
    ("records", "words"),
    [
        ([_passage("a"), _passage("b")], "no labels"),
        ([_passage("a", response_label=1), _passage("b", response_label=1)], "'response_label': every response unit"),
        (
            [_passage("a", response_label=1), {"id": "b", "response": "A.", "sentences": ["A."], "response_label": 0}],
            "record 'b', field 'samples'",
        ),
    ],
    ids=["no-labels", "one-class", "no-samples-no-prompt"],
)
def test_a_file_no_column_can_come_from_is_refused_in_one_line_before_any_model(
    records: list[dict[str, object]], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert main(["benchmark", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"hallulab benchmark: error: {path}: ") and words in err
    assert not (tmp_path / "out").exists()


def test_an_unknown_method_is_named_with_the_methods_there_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["benchmark", str(EXAMPLE), "--methods", "selfcheck_ngram,nope", "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hallulab benchmark: error: --methods: nope: no such method; the methods: ")


def test_the_provision_is_read_off_the_records() -> None:
    records = load_jsonl_records(EXAMPLE, None)
    provision = records_provision(records, "example")
    assert provision.labels == ("response",) and provision.prompts and provision.samples_in_data
    assert not provision.sac3_outputs and provision.responses_in_data
    sentence_labelled = [
        Record("a", "A is B. C is D.", ("A is B.", "C is D."), samples=("A is B.",), labels=(0.0, 1.0)),
        Record("b", "E is F.", ("E is F.",), labels=(0.0,), prompt="E?"),
    ]
    found = records_provision(sentence_labelled, "mine")
    assert found.labels == ("sentence", "passage") and not found.prompts and not found.samples_in_data
    with pytest.raises(ColumnInputError, match="every sentence unit is of one class"):
        records_provision(sentence_labelled[1:], "mine")
