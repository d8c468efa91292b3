"""The papers' numbers beside the table's cells (hallulab.benchmark.paper_numbers): paired only
where the paper scored the same data set, level, positive class and metric; each paired cell
scored by the paper's own metric; every other paper number of a column declared with its reason."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from hallulab.benchmark.__main__ import main as benchmark_main
from hallulab.benchmark.applicability import applicability, benchmark_datasets
from hallulab.benchmark.paper_numbers import NOT_PAIRED, PAIRINGS, PAPER_METRICS, Pairing, pairing_for, paper_entry
from hallulab.benchmark.render import cell_text, papers_note
from hallulab.benchmark.runs import BenchmarkSettings, cell_runs
from hallulab.benchmark.statistics import cell_statistics
from hallulab.benchmark.table import TableCell, TableRow
from hallulab.benchmark.units import CellUnits, binary_level, read_units
from hallulab.evaluation.paper_tables import PAPER_REFERENCE
from hallulab.evaluation.protocol import ProtocolKnobs
from hallulab.pipeline import registry
from hallulab.results.published import load_result

REPO = Path(__file__).resolve().parents[1]
CFG = ProtocolKnobs()
DATASETS = benchmark_datasets()
CELLS = {(cell.dataset, cell.method): cell for cell in applicability(datasets=DATASETS)}
RUNS = {run.key: run for run in cell_runs(list(CELLS.values()), DATASETS, BenchmarkSettings.load(), root=REPO)}


@pytest.mark.parametrize("pairing", PAIRINGS, ids=lambda p: f"{p.dataset}/{p.key}")
def test_a_pairing_reads_a_recorded_number_of_its_own_data_set_at_its_cells_level(pairing: Pairing) -> None:
    reference = PAPER_REFERENCE[pairing.reference]
    assert reference.dataset == pairing.dataset  # the paper's data set is the column's
    assert pairing.value == reference.rows[pairing.row][pairing.metric]
    spec = registry.methods()[pairing.method]
    assert pairing.variant in spec.benchmark_variants  # a row of the table
    cell = CELLS[(pairing.dataset, pairing.method)]
    assert cell.applies and binary_level(cell.levels) == PAPER_METRICS[pairing.metric].level
    assert pairing_for(pairing.dataset, pairing.key) is pairing
    assert sum(p.dataset == pairing.dataset and p.key == pairing.key for p in PAIRINGS) == 1


def _wikibio_units(method: str, variant: str) -> CellUnits:
    return read_units(RUNS[f"wikibio/{method}"].units_file(REPO))[variant]


def test_the_tables_positive_class_on_wikibio_is_the_papers_nonfact_class() -> None:
    """SelfCheckGPT's and FactSelfCheck's Random rows are NonFact's positive rate on the 1,908
    sentences: the whole-set cell's units give the same rate, so a sentence the table counts
    positive is one the papers count NonFact (minor or major inaccurate)."""
    units = _wikibio_units("selfcheck_ngram", "ngram_n1_max")
    pairing = pairing_for("wikibio", "selfcheck_ngram/ngram_n1_max")
    assert pairing is not None
    assert (len(units.scores), len(set(units.records))) == (pairing.units, pairing.records)
    rate = round(100.0 * float(units.positive.mean()), 2)
    assert rate == PAPER_REFERENCE["table2"].rows["random"]["nonfact_aucpr"]
    assert rate == PAPER_REFERENCE["fsc-table1"].rows["random_sentence"]["nonfact_aucpr"]


@pytest.mark.parametrize(("method", "variant"), [("selfcheck_ngram", "ngram_n1_max"), ("selfcheck_nli", "nli")])
def test_a_whole_set_cell_by_the_papers_metric_is_its_evaluations_nonfact_aucpr(method: str, variant: str) -> None:
    """The paired value is the NonFact AUC-PR the evaluation protocol (the papers' released
    evaluation) wrote for the same run, from the cell's units alone."""
    pairing = pairing_for("wikibio", f"{method}/{variant}")
    assert pairing is not None
    entry = paper_entry(pairing, _wikibio_units(method, variant), CFG)
    result = load_result(RUNS[f"wikibio/{method}"].results_file(REPO))
    assert entry["same_units"]
    assert entry["cell"][0] == pytest.approx(result.metrics[variant]["nonfact_aucpr"], abs=0.01)
    low, high = entry["cell"][1:]
    assert low < entry["cell"][0] < high


def test_the_papers_metric_is_not_the_tables_pr_auc() -> None:
    """A flat score: average precision gives the positive rate p, the papers' trapezoid AUC-PR
    (1 + p) / 2; the table's PR-AUC could not stand in for the paper's metric."""
    count = 20
    units = CellUnits(
        "sentence",
        "flat",
        tuple(f"r-{i}" for i in range(count)),
        (0,) * count,
        np.asarray([i < 15 for i in range(count)], dtype=bool),
        np.ones(count),
    )
    pairing = pairing_for("wikibio", "selfcheck_prompt/prompt")
    assert pairing is not None
    by_paper = paper_entry(pairing, units, CFG)["cell"][0]
    assert cell_statistics(units, CFG).metrics["pr_auc"].point == pytest.approx(75.0)
    assert by_paper == pytest.approx(87.5)
    with pytest.raises(ValueError, match="at the response level, the paper's NonFact AUC-PR"):
        paper_entry(
            pairing, CellUnits("response", "flat", units.records, units.units, units.positive, units.scores), CFG
        )


def test_every_paper_number_of_a_column_is_paired_or_declared_with_its_reason() -> None:
    """A recorded paper number on a data set the table has as a column is either set beside a
    cell or listed with why not; the HalluCheck numbers on NQ-open and HotpotQA, on another
    model's own answers, are never paired."""
    columns = {dataset.name for dataset in DATASETS}
    paired = {pairing.reference for pairing in PAIRINGS}
    declared = {key for found in NOT_PAIRED for key in found.references}
    assert declared <= set(PAPER_REFERENCE) and not declared & paired
    for key, reference in PAPER_REFERENCE.items():
        if reference.dataset in columns and key not in paired:
            assert key in declared, key
    assert not {key for key in paired if key.startswith("hallucheck")}
    assert all(found.reason and set(found.datasets) <= columns for found in NOT_PAIRED)


def test_the_tables_show_the_papers_number_beside_its_metric_only() -> None:
    paper = {
        "paper": "SelfCheckGPT",
        "where": "Table 2, w/ NLI",
        "model": "DeBERTa-v3-large fine-tuned on MNLI",
        "metric": "nonfact_aucpr",
        "metric_title": "NonFact AUC-PR (trapezoid rule)",
        "beside": "pr_auc",
        "value": 92.5,
        "cell": [73.6, 70.0, 77.0],
        "paper_records": 238,
        "paper_units": 1908,
        "same_units": True,
        "cell_models": {"nli": "minilm_offline, recipe full, sentence first"},
    }
    entry = {
        "level": "sentence",
        "units": 1908,
        "records": 238,
        "metrics": {"roc_auc": [53.9, 49.0, 58.6], "pr_auc": [73.7, 68.8, 78.3]},
        "vs_best": {},
        "vs_baseline": {},
        "paper": paper,
    }
    assert cell_text(entry, "pr_auc", None, "selfcheck_nli/nli", False) == "73.7 [68.8, 78.3] · paper 92.5"
    assert cell_text(entry, "roc_auc", None, "selfcheck_nli/nli", False) == "53.9 [49.0, 58.6]"
    rows = [TableRow("selfcheck_nli", "SelfCheckGPT NLI", "nli", (TableCell(),))]
    note = papers_note(rows, ["wikibio"], {"columns": {"wikibio": {"rows": {"selfcheck_nli/nli": entry}}}})
    assert (
        "| wikibio | SelfCheckGPT NLI `nli` | NonFact AUC-PR (trapezoid rule) | 73.6 [70.0, 77.0]"
        " | 92.5 (SelfCheckGPT Table 2, w/ NLI) | DeBERTa-v3-large fine-tuned on MNLI"
        " | nli: minilm_offline, recipe full, sentence first | the same 1,908 sentences |"
    ) in note
    assert "HalluCheck (nq_open, hotpotqa): its Tables 2-4" in note
    assert "No filled cell is set beside a paper's number yet." in papers_note(rows, ["wikibio"], {"columns": {}})


def test_the_table_file_sets_the_papers_number_beside_a_committed_cell(tmp_path: Path) -> None:
    """The committed WikiBio NLI cell alone in a checkout: its entry carries SelfCheckGPT's
    Table 2 number and the cell scored by the paper's metric; the length cell, which no paper
    scored, carries none."""
    for key in ("wikibio/selfcheck_nli", "wikibio/length"):
        run = RUNS[key]
        for source in (run.results_file(REPO), run.units_file(REPO)):
            target = tmp_path / source.relative_to(REPO)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
    shutil.copy(REPO / "params.yaml", tmp_path / "params.yaml")
    assert benchmark_main(["--root", str(tmp_path), "table"]) == 0
    rows = json.loads((tmp_path / "results/benchmark.json").read_text())["columns"]["wikibio"]["rows"]
    paper = rows["selfcheck_nli/nli"]["paper"]
    assert paper["value"] == PAPER_REFERENCE["table2-nli"].rows["nli"]["nonfact_aucpr"]
    assert paper["same_units"] and paper["beside"] == "pr_auc"
    assert paper["cell_models"]["nli"].startswith("minilm_offline, recipe ")
    assert "paper" not in rows["length/length_tokens"]


def test_the_page_carries_the_papers_number_the_nli_model_and_the_members_of_a_cell() -> None:
    """The detector page's rows (hallulab.report.benchmark_view) hold a cell's ``paper`` as the
    table file has it, its NLI model in words and a combining cell's members; the page states
    what a pairing needs and every paper number no cell is set beside."""
    from hallulab.report.benchmark_view import benchmark_payload

    base = {"level": "sentence", "units": 10, "records": 2, "metrics": {"roc_auc": [50.0, 40.0, 60.0]}}
    paper = {"beside": "pr_auc", "value": 92.5}
    nli = {"name": "minilm_offline", "model": "models/nli_minilm", "pair_order": "sample_first", "recipe": "swaps_wide"}
    members = {"combined": ["a/v"], "to_combine": ["a/v"], "candidates": []}
    rows = {"m/v": {**base, "paper": paper, "nli": nli}, "ensemble/rank_mean": {**base, "members": members}}
    payload = benchmark_payload({"columns": {"wikibio": {"rows": rows}}}, {})
    by_cell = {f"{row['method']}/{row['variant']}": row for row in payload["rows"]}
    assert (
        by_cell["m/v"]["paper"] == paper and by_cell["m/v"]["nli"] == "minilm_offline, recipe swaps_wide, sample first"
    )
    assert by_cell["ensemble/rank_mean"]["members"] == members and by_cell["ensemble/rank_mean"]["nli"] is None
    assert payload["papers"]["rule"].startswith("A paper's number sits beside a cell only where")
    assert len(payload["papers"]["not_paired"]) == len(NOT_PAIRED)
