"""A combining cell's members (hallulab.benchmark.member_choice, hallulab.benchmark.runs): the
candidates of its data set's config less those whose own cells are model-limited, judged from
those cells' files as the table judges its rows, and what its run then carries."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hallulab.benchmark.applicability import applicability, benchmark_datasets
from hallulab.benchmark.member_choice import MIN_MEMBERS, MemberFiles, choose, judge
from hallulab.benchmark.runs import BenchmarkSettings, CellRun, cell_runs, run_pending
from hallulab.benchmark.units import CellUnits, write_units
from hallulab.benchmark.validity import MODEL_LIMITED, VALID
from hallulab.pipeline import registry
from hallulab.pipeline.members import Member

REPO = Path(__file__).resolve().parents[1]
DATASETS = benchmark_datasets()
CELLS = applicability(datasets=DATASETS)
SETTINGS = BenchmarkSettings.load()
KEY = "ensemble.members"


def _units(variant: str, scores: list[float]) -> CellUnits:
    count = len(scores)
    return CellUnits(
        "response",
        variant,
        tuple(f"r-{i}" for i in range(count)),
        (0,) * count,
        np.asarray([i % 2 == 0 for i in range(count)], dtype=bool),
        np.asarray(scores, dtype=np.float64),
    )


def _cell(root: Path, method: str, units: dict[str, list[float]]) -> MemberFiles:
    """A member cell as the benchmark keeps it: a results file and a units file."""
    results = root / f"{method}.json"
    results.write_text('{"diagnostics": {}}', encoding="utf-8")
    path = root / f"{method}.units.csv"
    write_units(path, "response", {variant: _units(variant, scores) for variant, scores in units.items()})
    return MemberFiles(results, (path, root / f"{method}.member-units.csv"))


VARIED = [0.1 * i for i in range(10)]
FLAT = [1.0] * 9 + [0.0]  # one score on 90% of the units: model-limited


def test_a_model_limited_candidate_is_left_out_and_the_run_carries_the_narrowed_list(tmp_path: Path) -> None:
    files = {
        "a": _cell(tmp_path, "a", {"flat": FLAT}),
        "b": _cell(tmp_path, "b", {"v": VARIED}),
        "c": _cell(tmp_path, "c", {"w": VARIED[::-1]}),
    }
    candidates = [Member("a", "flat"), Member("b", "v"), Member("c", "w")]
    choice = choose(KEY, candidates, files, {})
    assert [j.verdict.verdict for j in choice.judgements if j.verdict] == [MODEL_LIMITED, VALID, VALID]
    assert choice.kept == (Member("b", "v"), Member("c", "w"))
    assert [found.member for found in choice.left_out] == [Member("a", "flat")]
    assert choice.blocked is None
    assert choice.settings == ("ensemble.members=[{method:b,variant:v},{method:c,variant:w}]",)
    written = choice.to_dict()["candidates"][0]
    assert written["verdict"] == MODEL_LIMITED and written["reason"] == "1.0 on 9 of 10 responses"


def test_every_candidate_valid_keeps_the_configs_list_and_adds_no_setting(tmp_path: Path) -> None:
    files = {"b": _cell(tmp_path, "b", {"v": VARIED, "w": VARIED[::-1]})}
    choice = choose(KEY, [Member("b", "v"), Member("b", "w")], files, {})
    assert choice.kept == choice.candidates and choice.settings == () and choice.blocked is None


def test_a_candidate_not_judged_or_too_few_members_block_the_cell(tmp_path: Path) -> None:
    files = {"b": _cell(tmp_path, "b", {"v": VARIED}), "a": _cell(tmp_path, "a", {"flat": FLAT})}
    missing = choose(KEY, [Member("b", "v"), Member("b", "other"), Member("z", "v")], files, {})
    assert [found.member.key for found in missing.unjudged] == ["b/other", "z/v"]
    assert missing.kept == missing.candidates  # kept in the listing until judged
    assert "member b/other is not judged yet: its cell has kept no units of 'other' in " in (missing.blocked or "")
    assert "member z/v is not judged yet: z has no cell in this column" in (missing.blocked or "")
    (tmp_path / "b.json").unlink()
    assert "its cell has not run" in (judge(Member("b", "v"), files["b"], ()).why)
    few = choose(KEY, [Member("a", "flat"), Member("b", "v")], {"a": files["a"]}, {})
    assert few.unjudged[0].member == Member("b", "v")
    kept_one = {"a": files["a"], "c": _cell(tmp_path, "c", {"w": VARIED})}
    alone = choose(KEY, [Member("a", "flat"), Member("c", "w")], kept_one, {})
    assert len(alone.kept) == 1 < MIN_MEMBERS
    assert alone.blocked == (
        f"1 member(s) not model-limited, fewer than the {MIN_MEMBERS} a combination needs (model-limited: a/flat)"
    )


def test_a_member_variant_the_table_does_not_show_is_judged_from_its_member_units_file(tmp_path: Path) -> None:
    files = _cell(tmp_path, "b", {"v": VARIED})
    write_units(files.units_files[1], "response", {"extra": _units("extra", FLAT)})
    assert judge(Member("b", "extra"), files, ()).limited
    assert not judge(Member("b", "v"), files, ()).limited


def test_a_committed_cell_is_judged_with_its_methods_role_checks() -> None:
    """SelfCheckGPT-Prompt's committed WikiBio cell, as a candidate: its flat verdict and its
    evaluator's No to every pair, read from its units and results files, make it model-limited."""
    run = next(r for r in cell_runs(CELLS, DATASETS, SETTINGS, root=REPO) if r.key == "wikibio/selfcheck_prompt")
    checks = registry.methods()["selfcheck_prompt"].role_checks
    found = judge(Member("selfcheck_prompt", "prompt"), run.member_files(REPO), checks)
    assert found.limited and found.verdict is not None
    assert "the evaluator replied No to" in found.verdict.reason
    assert not judge(Member("selfcheck_prompt", "prompt_pno"), run.member_files(REPO), ()).limited


def _copy_cells(work: Path, runs: tuple[CellRun, ...], dataset: str) -> None:
    for run in runs:
        if run.dataset != dataset:
            continue
        for source in (run.results_file(REPO), run.units_file(REPO), run.member_units_file(REPO)):
            if source.is_file():
                target = work / source.relative_to(REPO)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, target)


def test_the_ensemble_cell_drops_a_member_whose_cell_turns_model_limited(tmp_path: Path) -> None:
    """The committed WikiBio cells copied, then FactSelfCheck's frequency reading made flat: the
    ensemble's cell leaves it out, and with it FactSelfCheck's method settings; the member list
    it runs with is in its settings, and its command keeps the braces from bash."""
    runs = cell_runs(CELLS, DATASETS, SETTINGS, root=REPO)
    _copy_cells(tmp_path, runs, "wikibio")
    before = {run.key: run for run in cell_runs(CELLS, DATASETS, SETTINGS, root=tmp_path)}["wikibio/ensemble"]
    assert before.members is not None and not before.members.left_out and before.members.blocked is None
    assert not any(setting.startswith("ensemble.members=") for setting in before.settings)
    fsc = next(run for run in runs if run.key == "wikibio/factselfcheck")
    units = fsc.units_file(tmp_path)
    lines = units.read_text(encoding="utf-8").splitlines()
    flat = [",".join([*line.split(",")[:4], "1.0"]) if line.startswith("fsc_kg_freq_max,") else line for line in lines]
    units.write_text("\n".join(flat) + "\n", encoding="utf-8")
    after = {run.key: run for run in cell_runs(CELLS, DATASETS, SETTINGS, root=tmp_path)}["wikibio/ensemble"]
    assert after.members is not None
    assert [found.member.key for found in after.members.left_out] == ["factselfcheck/fsc_kg_freq_max"]
    members = [m for m in before.members.candidates if m.method != "factselfcheck"]
    listed = ",".join(f"{{method:{m.method},variant:{m.variant}}}" for m in members)
    assert after.settings[-1] == f"ensemble.members=[{listed}]"
    assert not any(setting.startswith("factselfcheck.") for setting in after.settings)
    args = after.make_arguments[-1].removeprefix("ARGS=")
    words = subprocess.run(["bash", "-c", f"printf '%s\\n' {args}"], capture_output=True, text=True, check=True)
    assert words.stdout.splitlines()[-1] == f"ensemble.members=[{listed}]"  # as make hands it to bash
    assert "\\{method:" in after.command


def test_combining_cells_run_last_each_planned_again_and_a_blocked_one_is_not_run(tmp_path: Path) -> None:
    unjudged = choose(KEY, [Member("x", "v")], {}, {})
    combining = CellRun("d", "ensemble", (), False, ("response",), ("rank_mean",), members=unjudged)
    plain = CellRun("d", "length", (), False, ("response",), ("length_tokens",))
    executed: list[str] = []
    planned: list[str] = []

    def plan(run: CellRun) -> CellRun:
        planned.append(run.key)
        return run

    def failing(run: CellRun) -> int:
        executed.append(run.key)
        return 1

    outcome = run_pending([combining, plain], failing, tmp_path, plan=plan)
    assert executed == ["d/length"] and planned == ["d/ensemble"]
    assert outcome.failed == ("d/length", "d/ensemble") and outcome.ran == ()


@pytest.mark.parametrize("dataset", [d.name for d in DATASETS if "ensemble" in d.combinations])
def test_every_committed_candidate_is_a_variant_its_methods_cell_keeps(dataset: str) -> None:
    """Each candidate's variant is a row of its method's cell or one of the cell's member
    variants, so that the cell's run keeps what judges it."""
    runs = {run.key: run for run in cell_runs(CELLS, DATASETS, SETTINGS)}
    combination = next(d for d in DATASETS if d.name == dataset).combinations["ensemble"]
    for member in combination.members:
        run = runs.get(f"{dataset}/{member.method}")
        if run is None:
            continue
        assert member.variant in (*run.variants, *run.member_variants) or not run.variants, (dataset, member)
        assert not set(run.member_variants) & set(run.variants)


def test_a_candidate_its_cell_has_not_kept_waits_and_names_the_cells_command(tmp_path: Path) -> None:
    """NQ-open's grey-box candidate (a variant the table does not show) with its cell's results
    and units files but no member-units file: not judged, the reason naming the files by their
    place in the checkout and the command that keeps them."""
    runs = cell_runs(CELLS, DATASETS, SETTINGS, root=REPO)
    greybox = next(run for run in runs if run.key == "nq_open/greybox")
    for source in (greybox.results_file(REPO), greybox.units_file(REPO)):
        target = tmp_path / source.relative_to(REPO)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
    ensemble = {run.key: run for run in cell_runs(CELLS, DATASETS, SETTINGS, root=tmp_path)}["nq_open/ensemble"]
    assert ensemble.members is not None
    waiting = {found.member.key: found.why for found in ensemble.members.unjudged}
    variant = next(v for v in greybox.member_variants)
    assert waiting[f"greybox/{variant}"] == (
        f"its cell has kept no units of {variant!r} in results/benchmark/nq_open/greybox.units.csv or"
        " results/benchmark/nq_open/greybox.member-units.csv: `make benchmark CELL=nq_open/greybox` runs it"
    )
    assert str(tmp_path) not in (ensemble.members.blocked or "")
