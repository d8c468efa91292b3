"""The benchmark's runs (hallulab.benchmark.runs): one published run per applicable cell, the
subset rule for cells that call an LLM, and the resume of an interrupted table."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from hallulab.benchmark.__main__ import main as benchmark_main
from hallulab.benchmark.applicability import applicability, benchmark_datasets
from hallulab.benchmark.render import NOT_RUN
from hallulab.benchmark.runs import (
    RESULT_PREFIX,
    BenchmarkSettings,
    CellRun,
    calls_an_llm,
    cell_runs,
    missing_variants,
    pending,
    run_pending,
    with_arguments,
)
from hallulab.core.config import ConfigError
from hallulab.pipeline import registry
from hallulab.report.result_tables import render_benchmark

REPO = Path(__file__).resolve().parents[1]
DATASETS = benchmark_datasets()
CELLS = applicability(datasets=DATASETS)
SETTINGS = BenchmarkSettings.load()
RUNS = cell_runs(CELLS, DATASETS, SETTINGS)
BY_KEY = {run.key: run for run in RUNS}


def test_every_applicable_cell_has_one_run_and_no_other_cell_has_one() -> None:
    applicable = [f"{cell.dataset}/{cell.method}" for cell in CELLS if cell.applies]
    assert [run.key for run in RUNS] == applicable
    assert all(run.name == f"{RESULT_PREFIX}{run.method}" for run in RUNS)
    expected = Path("r/results/wikibio/benchmark_selfcheck_ngram.json")
    assert BY_KEY["wikibio/selfcheck_ngram"].results_file(Path("r")) == expected
    assert "wikibio/sac3" not in BY_KEY  # n/a: no verifier outputs
    assert "wikibio/self_familiarity" not in BY_KEY  # n/a: no prompts


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("wikibio/selfcheck_ngram", False),  # its samples are in the data: no model at all
        ("nq_open/lexical_similarity", False),  # SAC3's sets carry 10 samples
        ("nq_open/sac3", False),  # the verdicts are in the data
        ("wikibio/selfcheck_nli", False),  # an NLI model, not an LLM
        ("wikibio/length", False),
        ("factualbio/selfcheck_ngram", True),  # no samples in the data: generate draws them
        ("wikibio/greybox", True),  # the proxy role teacher-forces the response (response_tokens)
        ("nq_open/hallucheck", True),  # its score step regenerates with the generator
        ("concept7/length", True),  # prompt-only records: generate writes the response
    ],
)
def test_a_cell_calls_an_llm_by_its_declarations(key: str, expected: bool) -> None:
    assert BY_KEY[key].calls_llm is expected


def test_the_ensemble_calls_an_llm_when_a_member_does() -> None:
    methods, artifacts = registry.methods(), registry.artifacts()
    for dataset in DATASETS:
        run = BY_KEY.get(f"{dataset.name}/ensemble")
        if run is None:
            continue
        members = dataset.combinations["ensemble"].members
        member_calls = [calls_an_llm(methods[m.method], dataset, methods, artifacts) for m in members]
        assert run.calls_llm is any(member_calls), dataset.name


def test_a_cell_that_calls_an_llm_runs_on_its_data_sets_subset_the_rest_on_the_whole_set() -> None:
    for run in RUNS:
        subset = SETTINGS.llm_subsets.get(run.dataset, ()) if run.calls_llm else ()
        assert run.settings[: len(subset)] == subset, run.key
        assert not set(run.settings[len(subset) :]) & {s for s in run.settings if s.startswith("dataset.")}, run.key
    assert BY_KEY["wikibio/selfcheck_ngram"].command == (
        'make result DATASET=wikibio METHOD=selfcheck_ngram NAME=benchmark_selfcheck_ngram ARGS=""'
    )
    limited = BY_KEY["nq_open/greybox"]  # calls an LLM, no method or NLI settings
    assert limited.command.endswith(f'ARGS="{" ".join(f"-S {s}" for s in SETTINGS.llm_subsets["nq_open"])}"')
    assert limited.make_arguments[-1] == "ARGS=" + " ".join(f"-S {s}" for s in SETTINGS.llm_subsets["nq_open"])


def test_a_methods_settings_follow_its_subset_in_each_of_its_cells_and_in_an_ensembles_with_it() -> None:
    settings = BenchmarkSettings({"nq_open": ("dataset.limit=7",)}, {"hallucheck": ("hallucheck.score.seed=3",)})
    runs = {run.key: run for run in cell_runs(CELLS, DATASETS, settings)}
    assert runs["nq_open/hallucheck"].settings == ("dataset.limit=7", "hallucheck.score.seed=3")
    assert runs["hotpotqa/hallucheck"].settings == ("hallucheck.score.seed=3",)  # a data set without a subset
    assert runs["nq_open/selfcheck_ngram"].settings == ()  # calls no LLM, no entry of its own
    assert runs["nq_open/hallucheck"].command.endswith('ARGS="-S dataset.limit=7 -S hallucheck.score.seed=3"')
    # an ensemble's cell takes its own settings, then its members' (each once), so it reads their cells' outputs
    dataset = next(d for d in DATASETS if d.name == "nq_open")
    first, second = (m.method for m in dataset.combinations["ensemble"].members[:2])
    combined = BenchmarkSettings(
        {}, {"ensemble": ("ensemble.seed=1",), second: ("b=2", "c=3"), first: ("a=1", "c=3"), "hallucheck": ("h=1",)}
    )
    ensemble = {run.key: run for run in cell_runs(CELLS, DATASETS, combined)}["nq_open/ensemble"]
    assert ensemble.settings == ("ensemble.seed=1", "a=1", "c=3", "b=2")


def test_the_committed_method_settings_keep_a_cell_to_the_variants_the_table_shows() -> None:
    assert set(SETTINGS.method_settings) <= set(registry.methods())
    assert "hallucheck.score.decodings=[greedy]" in BY_KEY["nq_open/hallucheck"].settings
    assert BY_KEY["nq_open/hallucheck"].variants == ("hallucheck_ner_greedy", "hallucheck_ner_greedy_f1")
    assert BY_KEY["wikibio/ensemble"].settings[-1] == "factselfcheck.score.llm_variants=[kg]"


@pytest.mark.parametrize(
    ("text", "when", "message"),
    [
        ("llm_subsets:\n  wikibio: 40\n", "load", r"llm_subsets\.wikibio: expected a list of key=value settings"),
        ("llm_subsets:\n  wikibio_v2: [dataset.limit=3]\n", "runs", r"not benchmark columns: \['wikibio_v2'\]"),
        (
            "method_settings:\n  hallucheck: hallucheck.score.seed=3\n",
            "load",
            r"method_settings\.hallucheck: expected a list of key=value settings",
        ),
        ("method_settings:\n  halucheck: [hallucheck.score.seed=3]\n", "runs", r"not registered: \['halucheck'\]"),
    ],
)
def test_the_settings_file_refuses_a_malformed_entry_and_an_unknown_name(
    tmp_path: Path, text: str, when: str, message: str
) -> None:
    path = tmp_path / "benchmark.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        settings = BenchmarkSettings.load(path)
        assert when == "runs", "the file loaded; its error was expected on reading it"
        cell_runs(CELLS, DATASETS, settings)


class _PublishingRunner:
    """Stands in for ``make result`` where the test is about the order of work: writes the
    cell's results file, or fails for the keys it is told to."""

    def __init__(self, root: Path, failing: frozenset[str] = frozenset()) -> None:
        self.root, self.failing = root, failing
        self.ran: list[str] = []

    def __call__(self, run: CellRun) -> int:
        self.ran.append(run.key)
        if run.key in self.failing:
            return 2
        path = run.results_file(self.root)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"command": run.command, "overrides": list(run.settings)}))
        run.units_file(self.root).parent.mkdir(parents=True, exist_ok=True)
        rows = "".join(f"{variant},r-0,0,1,0.5\n" for variant in run.variants)
        run.units_file(self.root).write_text(f"# level: response\nvariant,record,unit,positive,score\n{rows}")
        if run.member_variants:  # what a member cell keeps for a combining cell's choice
            kept = "".join(f"{variant},r-0,0,1,0.5\n" for variant in run.member_variants)
            header = "# level: response\nvariant,record,unit,positive,score\n"
            run.member_units_file(self.root).write_text(header + kept)
        return 0


def test_an_interrupted_table_resumes_at_the_first_cell_not_done(tmp_path: Path) -> None:
    runs = RUNS[:6]
    first = _PublishingRunner(tmp_path, failing=frozenset({runs[3].key}))
    outcome = run_pending(runs, first, tmp_path)
    assert first.ran == [run.key for run in runs]  # a failing cell does not stop the others
    assert outcome.failed == (runs[3].key,) and len(outcome.ran) == 5 and outcome.done_before == ()
    assert pending(runs, tmp_path) == [runs[3]]

    again = _PublishingRunner(tmp_path)
    outcome = run_pending(runs, again, tmp_path)
    assert again.ran == [runs[3].key]  # the finished cells are not redone
    assert outcome.done_before == tuple(run.key for run in runs if run is not runs[3])
    assert pending(runs, tmp_path) == []

    alone = _PublishingRunner(tmp_path)
    run_pending(runs, alone, tmp_path, only=runs[0].key)  # one cell again, though done
    assert alone.ran == [runs[0].key]
    with pytest.raises(ConfigError, match="not an applicable cell"):
        run_pending(runs, alone, tmp_path, only="wikibio/sac3")


def test_a_variant_added_to_the_table_after_a_cell_ran_runs_the_cell_again(tmp_path: Path) -> None:
    run = BY_KEY["nq_open/selfcheck_prompt"]
    assert len(run.variants) >= 2
    earlier = replace(run, variants=run.variants[:1])
    run_pending([earlier], _PublishingRunner(tmp_path), tmp_path)
    assert pending([earlier], tmp_path) == [] and missing_variants(run, tmp_path) == run.variants[1:]
    assert pending([run], tmp_path) == [run]
    again = _PublishingRunner(tmp_path)
    run_pending([run], again, tmp_path)
    assert again.ran == [run.key] and pending([run], tmp_path) == []


def _cells_by_column(table: str, variant: str) -> dict[str, str]:
    """The rendered table's cells in the row of ``variant``, by column (data set) name."""
    row = next(line for line in table.splitlines() if f"`{variant}`" in line)
    header = next(line for line in table.splitlines() if line.startswith("| Method"))
    columns = [name.strip() for name in header.strip("|").split("|")][2:]
    return dict(zip(columns, [cell.strip() for cell in row.strip("|").split("|")][2:], strict=True))


def test_a_variant_that_writes_no_scores_at_a_cells_level_is_neither_awaited_nor_shown(tmp_path: Path) -> None:
    """LUQ's response reading writes no sentence scores: FactualBio's LUQ cell (sentence labels)
    runs for its sentence reading alone, is done once its units hold that one, and the table says
    n/a for the response reading there; NQ-open's cell (response labels) keeps both."""
    sentence_cell, response_cell = BY_KEY["factualbio/luq"], BY_KEY["nq_open/luq"]
    assert sentence_cell.variants == ("luq_sentence",)
    assert response_cell.variants == ("luq_sentence", "luq_response")
    checkout, empty = tmp_path / "ran", tmp_path / "empty"
    run_pending([sentence_cell], _PublishingRunner(checkout), checkout)
    assert missing_variants(sentence_cell, checkout) == () and pending([sentence_cell], checkout) == []
    empty.mkdir()
    (empty / "params.yaml").write_bytes((REPO / "params.yaml").read_bytes())
    table = render_benchmark(empty, ("roc_auc",))
    by_column = _cells_by_column(table, "luq_response")
    assert by_column["factualbio"] == "n/a: the variant writes no sentence scores"
    assert by_column["nq_open"] == NOT_RUN


def test_a_table_refilled_with_other_settings_runs_every_cell_again(tmp_path: Path) -> None:
    runs = RUNS[:3]
    run_pending(runs, _PublishingRunner(tmp_path), tmp_path)
    assert pending(runs, tmp_path) == []
    other = with_arguments(runs, "-S llm=qwen_hf -S nli=deberta_v3_large_mnli")
    assert all(run.settings[-2:] == ("llm=qwen_hf", "nli=deberta_v3_large_mnli") for run in other)
    assert "-S llm=qwen_hf -S nli=deberta_v3_large_mnli" in other[0].command
    assert pending(other, tmp_path) == list(other)
    refill = _PublishingRunner(tmp_path)
    run_pending(other, refill, tmp_path)
    assert refill.ran == [run.key for run in other] and pending(other, tmp_path) == []
    with pytest.raises(ConfigError, match="expected -S key=value settings only"):
        with_arguments(runs, "--force")


def test_the_list_shows_every_cell_with_its_state_command_or_reason() -> None:
    venv = Path(sys.executable).parent.parent
    done = subprocess.run(
        ["make", "-s", "-o", f"{venv}/.hallulab-installed", "benchmark-list", f"VENV={venv}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == len(CELLS)
    rows = {line.split("\t")[0]: line.split("\t")[1:] for line in lines}
    assert rows["wikibio/sac3"] == ["n/a", "needs the data set's SAC3 verifier outputs"]
    state, command = rows["nq_open/length"]
    assert state in {"done", "to run"} and command == BY_KEY["nq_open/length"].command


def test_the_rendered_table_shows_a_published_cell_not_run_cells_and_reasons(tmp_path: Path) -> None:
    """A published cell (the committed nq_open SAC3 cell, its results and units files alone in a
    checkout) shows each metric with its interval from the table file; the others say why not or
    that they wait."""
    run = BY_KEY["nq_open/sac3"]
    for source in (run.results_file(REPO), run.units_file(REPO)):
        target = tmp_path / source.relative_to(REPO)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
    (tmp_path / "params.yaml").write_bytes((REPO / "params.yaml").read_bytes())
    assert benchmark_main(["--root", str(tmp_path), "table"]) == 0
    entry = json.loads((tmp_path / "results/benchmark.json").read_text())["columns"]["nq_open"]["rows"]
    point, low, high = entry["sac3/sac3_q"]["metrics"]["prr"]
    table = render_benchmark(tmp_path, ("prr",))
    by_column = _cells_by_column(table, "sac3_q")
    assert by_column["nq_open"] == f"**{point:.1f}** [{low:.1f}, {high:.1f}]"  # alone in its column: the best
    assert by_column["hotpotqa"] == NOT_RUN
    assert by_column["wikibio"] == "n/a: needs the data set's SAC3 verifier outputs"
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| Method")]
    assert len(rows) == 1 + sum(len(s.benchmark_variants) for s in registry.methods().values())  # + random


def test_the_caption_says_what_each_column_scored_and_a_methods_own_settings() -> None:
    from hallulab.benchmark.render import runs_caption
    from hallulab.benchmark.table import TableCell, TableRow
    from hallulab.results.published import load_result

    made = load_result(REPO / "results/nq_open/benchmark_length.json")
    whole = TableCell(result=replace(made, overrides=[]))
    subset = TableCell(result=replace(made, overrides=["dataset.limit=100"]))
    own = TableCell(result=replace(made, overrides=["dataset.limit=100", "hallucheck.score.decodings=[greedy]"]))
    rows = [
        TableRow("length", "Unit length", "length_tokens", (whole, TableCell(reason="needs prompts"))),
        TableRow("hallucheck", "HalluCheck", "hallucheck_ner_greedy", (own, TableCell())),
        TableRow("greybox", "Grey-box", "max_entropy", (subset, TableCell())),
    ]
    table = {
        "columns": {
            "a": {
                "rows": {
                    "length/length_tokens": {"records": 250},
                    "hallucheck/hallucheck_ner_greedy": {"records": 100},
                    "greybox/max_entropy": {"records": 98},
                }
            }
        }
    }
    assert runs_caption(rows, ["a", "b"], table) == (
        "**Records per cell** (those with a labelled unit at its level): a: 250 records (the whole set),"
        " 98 or 100 records (`-S dataset.limit=100`). **Other settings** (a method's entry of"
        " `conf/benchmark.yaml`'s `method_settings`, which keeps its cells to the variants shown, then the"
        " `ARGS` the table was filled with): HalluCheck: `-S hallucheck.score.decodings=[greedy]`."
    )
    assert runs_caption(rows[:1], ["b"], {"columns": {}}) == ""
