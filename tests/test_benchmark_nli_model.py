"""The NLI model behind the table's cells (hallulab.benchmark.nli_model, hallulab.benchmark.runs):
which cells read one, read off the methods' declarations; the one NLI model every such cell is
given, the recipe whose published run ranks WikiBio best; and the model and recipe each cell
names in the table, from its own settings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hallulab.benchmark.__main__ import main as benchmark_main
from hallulab.benchmark.applicability import applicability, benchmark_datasets
from hallulab.benchmark.nli_model import nli_reading, reads_nli
from hallulab.benchmark.render import nli_table
from hallulab.benchmark.runs import BenchmarkSettings, cell_runs
from hallulab.benchmark.table import TableCell, TableRow
from hallulab.pipeline import registry
from hallulab.results.published import load_result

REPO = Path(__file__).resolve().parents[1]
METHODS = registry.methods()
ARTIFACTS = registry.artifacts()
DATASETS = benchmark_datasets()
CELLS = applicability(datasets=DATASETS)
SETTINGS = BenchmarkSettings.load()
RUNS = cell_runs(CELLS, DATASETS, SETTINGS, root=REPO)


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("selfcheck_nli", True),  # its score step reads nli
        ("semantic_entropy", True),
        ("ccp", True),
        ("eig_val_laplacian", True),  # through the nli_pair_matrix artifact it requires
        ("selfcheck_ngram", False),
        ("selfcheck_bertscore", False),
        ("greybox", False),
        ("self_familiarity", False),
    ],
)
def test_a_method_reads_an_nli_model_by_its_declarations(method: str, expected: bool) -> None:
    assert reads_nli(METHODS[method], ARTIFACTS) is expected


def test_an_ensemble_reads_an_nli_model_where_a_member_it_combines_does() -> None:
    ensemble = METHODS["ensemble"]
    assert reads_nli(ensemble, ARTIFACTS, METHODS, ["selfcheck_ngram", "ccp"])
    assert not reads_nli(ensemble, ARTIFACTS, METHODS, ["selfcheck_ngram", "greybox"])


def test_every_nli_bound_cell_and_no_other_takes_the_nli_settings() -> None:
    assert SETTINGS.nli_settings, "conf/benchmark.yaml names the NLI model of the NLI-bound cells"
    bound = [run.key for run in RUNS if run.reads_nli]
    assert {"wikibio/selfcheck_nli", "nq_open/semantic_entropy", "factualbio/ccp"} <= set(bound)
    for run in RUNS:
        tail = run.settings[-len(SETTINGS.nli_settings) :]
        if run.reads_nli and run.members is None:
            assert tail == SETTINGS.nli_settings, run.key
        elif not run.reads_nli:
            assert not set(SETTINGS.nli_settings) & set(run.settings), run.key
    factualbio = next(run for run in RUNS if run.key == "factualbio/ensemble")
    assert factualbio.reads_nli  # CCP's readings are its members


def _recipe_of_settings() -> str:
    recipes = [s.removeprefix("nli_train=") for s in SETTINGS.nli_settings if s.startswith("nli_train=")]
    assert len(recipes) == 1
    return recipes[0]


def test_the_configured_recipe_ranks_wikibio_best_among_the_recipes_published_runs() -> None:
    """The recipe of ``nli_settings`` is the one whose published SelfCheckGPT-NLI run on WikiBio
    has the highest NonFact AUC-PR (each run's recipe read from its own settings)."""
    best: dict[str, float] = {}
    for path in sorted((REPO / "results/wikibio").glob("selfcheck_nli*.json")):
        result = load_result(path)
        reading = nli_reading("wikibio", result.overrides, result.params.get("nli"))
        assert reading.recipe is not None, path
        value = result.metrics["nli"]["nonfact_aucpr"]
        assert value is not None, path
        best[reading.recipe] = max(best.get(reading.recipe, value), value)
    assert len(best) >= 2, best
    assert max(best, key=best.__getitem__) == _recipe_of_settings()


def test_a_cells_reading_names_the_recipe_its_settings_gave_it() -> None:
    default = nli_reading("wikibio", [])
    assert (default.name, default.recipe, default.pair_order) == ("minilm_offline", "full", "sentence_first")
    chosen = nli_reading("wikibio", list(SETTINGS.nli_settings))
    assert chosen.recipe == _recipe_of_settings() and chosen.pair_order == "sample_first"
    assert chosen.text() == f"minilm_offline, recipe {_recipe_of_settings()}, sample first"
    hub = nli_reading("wikibio", ["nli=deberta_v3_large_mnli"])
    assert hub.recipe is None and hub.model == "potsawee/deberta-v3-large-mnli"


def test_the_table_names_the_nli_model_of_each_nli_bound_cell(tmp_path: Path) -> None:
    """The committed WikiBio NLI cell alone in a checkout: its table entry names the NLI model
    and recipe its own settings gave it, and the rendered table shows it; a cell that reads no
    NLI model names none."""
    by_key = {run.key: run for run in RUNS}
    for key in ("wikibio/selfcheck_nli", "wikibio/selfcheck_ngram"):
        run = by_key[key]
        for source in (run.results_file(REPO), run.units_file(REPO)):
            target = tmp_path / source.relative_to(REPO)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
    shutil.copy(REPO / "params.yaml", tmp_path / "params.yaml")
    assert benchmark_main(["--root", str(tmp_path), "table"]) == 0
    table = json.loads((tmp_path / "results/benchmark.json").read_text())
    rows = table["columns"]["wikibio"]["rows"]
    result = load_result(by_key["wikibio/selfcheck_nli"].results_file(REPO))
    expected = nli_reading("wikibio", result.overrides, result.params.get("nli"))
    assert rows["selfcheck_nli/nli"]["nli"] == expected.to_dict()
    assert "nli" not in rows["selfcheck_ngram/ngram_n1_max"]
    cells = (TableCell(reads_nli=True, result=result), TableCell(reads_nli=False))
    text = nli_table([TableRow("selfcheck_nli", "SelfCheckGPT NLI", "nli", cells)], ["wikibio", "other"], table)
    assert f"| SelfCheckGPT NLI | `nli` | minilm_offline, recipe `{expected.recipe}`," in text
    assert text.rstrip().endswith("| no NLI |")
    assert nli_table([TableRow("selfcheck_ngram", "n-gram", "v", (TableCell(),))], ["wikibio"], table) == ""
