"""Committed results files and the README tables rendered from them."""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from hallulab.report.result_tables import (
    EXCERPT,
    MARKER,
    TableSpec,
    documents,
    main,
    render,
    render_excerpt,
    render_paired,
    render_table,
)
from hallulab.results.pending import load_pending
from hallulab.results.published import RESULTS_DIR, import_kept, load_result
from hallulab.tooling.environment import EnvironmentRef
from tests.helpers.results_files import write_result

ROOT = Path(__file__).resolve().parents[1]
RESULT_FILES = sorted((ROOT / RESULTS_DIR).glob("*/*.json"))
#: every page a results table, excerpt or benchmark table may sit in (``make readme`` renders them)
PAGES = documents([ROOT / "README.md", ROOT / "docs"])


def test_the_readme_renders_at_least_one_table_from_results() -> None:
    assert MARKER.search((ROOT / "README.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_results_table_of_a_page_equals_its_committed_file(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert render(text, ROOT) == text, (
        "run `make readme` (python -m hallulab.report.result_tables README.md docs) and commit"
    )


def test_the_render_command_rewrites_and_checks_every_page_of_a_folder(tmp_path: Path) -> None:
    """A marker in a page under docs/ renders as in the README, from paths relative to the
    root; ``--check`` names the page that differs."""
    readme = _copy_rendered_files(tmp_path)
    marker = next(MARKER.finditer(readme))
    page = tmp_path / "docs" / "papers" / "page.md"
    page.parent.mkdir(parents=True)
    stale = f"# A page\n\n{marker['open']}old\n{marker['close']}\n"
    page.write_text(stale, encoding="utf-8")
    (tmp_path / "docs" / "plain.md").write_text("no marker\n", encoding="utf-8")
    args = ["docs", "--root", str(tmp_path)]
    cwd = Path.cwd()
    try:
        os.chdir(tmp_path)
        assert main(["--check", *args]) == 1
        assert page.read_text(encoding="utf-8") == stale
        assert main(args) == 0
        assert main(["--check", *args]) == 0
    finally:
        os.chdir(cwd)
    assert page.read_text(encoding="utf-8") == f"# A page\n\n{marker.group(0)}\n"


def _copy_rendered_files(tmp_path: Path) -> str:
    """Copy every file the README renders from (results tables, excerpts, benchmark tables)
    under ``tmp_path``;
    returns the README's text."""
    shutil.copytree(ROOT / RESULTS_DIR, tmp_path / RESULTS_DIR)
    shutil.copytree(ROOT / "metrics", tmp_path / "metrics")
    (tmp_path / "perf").mkdir()
    for rendered in [*(ROOT / "perf").glob("*.json"), *(ROOT / "perf").glob("*.md")]:
        shutil.copy2(rendered, tmp_path / "perf" / rendered.name)
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_a_changed_results_file_makes_the_readme_check_fail(tmp_path: Path) -> None:
    text = _copy_rendered_files(tmp_path)
    match = MARKER.search(text)
    assert match is not None
    target = tmp_path / RESULTS_DIR / f"{match['file']}.json"
    raw = json.loads(target.read_text(encoding="utf-8"))
    variant = match["rows"].split(",")[0].strip()
    metric = match["cols"].split(",")[0].strip()
    raw["metrics"][variant][metric] = 12.3456
    target.write_text(json.dumps(raw), encoding="utf-8")
    assert render(text, tmp_path) != text


def test_the_readme_excerpts_follow_their_files(tmp_path: Path) -> None:
    """The toy summary in the README is an excerpt of metrics/toy/summary.md: a changed
    number there makes the README check fail."""
    text = _copy_rendered_files(tmp_path)
    assert any(m["file"] == "metrics/toy/summary.md" for m in EXCERPT.finditer(text))
    assert render(text, tmp_path) == text
    summary = tmp_path / "metrics/toy/summary.md"
    lines = summary.read_text(encoding="utf-8").splitlines()
    row = next(i for i, line in enumerate(lines) if line.split("|")[1:2] == ["   ngram_n1_avg                 "])
    lines[row] = lines[row].replace("|  9", "|  1", 1)
    summary.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert render(text, tmp_path) != text


def test_an_excerpt_keeps_the_head_headings_table_headers_and_named_rows() -> None:
    lines = [
        "# title",
        "note",
        "",
        "## level",
        "",
        "| method / variant | AUC |",
        "|---|---|",
        "| **a** | |",
        "|   a1 | 1.0 |",
        "|   a2 | 2.0 |",
        "| **b** | |",
        "|   b1 | 3.0 |",
    ]
    out = render_excerpt(lines, 2, ("b", "a1"))
    assert out.splitlines() == [
        "```text",
        "# title",
        "note",
        "",
        "## level",
        "",
        "| method / variant | AUC |",
        "|---|---|",
        "...",
        "|   a1 | 1.0 |",
        "...",
        "| **b** | |",
        "...",
        "```",
    ]
    with pytest.raises(KeyError, match="no row named"):
        render_excerpt(lines, 2, ("c",))


@pytest.mark.parametrize("path", RESULT_FILES, ids=[p.stem for p in RESULT_FILES])
def test_a_results_file_names_its_command_revision_and_models(path: Path) -> None:
    result = load_result(path)
    assert result.command.startswith("make ") and result.dataset == path.parent.name
    assert re.fullmatch(r"[0-9a-f]{40}", result.git_revision) and not result.git_dirty
    # a method without an LLM role (n-gram, SAC3-Q from the data's verdicts) names no model
    assert all(m.entry and m.name for m in result.models)
    assert all(m.sha256 for m in result.models if m.backend == "hf" and "gguf" in m.source)
    for variant, values in result.metrics.items():
        reasons = result.undefined.get("metrics", {}).get(variant, {})
        assert all((value is None) == (metric in reasons) for metric, value in values.items()), variant
    if result.environment is not None:  # results published since the environment is locked
        assert len(result.environment.lock_sha256) == 64 and result.environment.matches_lock


def test_the_environment_a_result_names_round_trips(tmp_path: Path) -> None:
    original = load_result(RESULT_FILES[0])
    stored = replace(original, environment=EnvironmentRef("ab" * 32, False, ["numpy: locked 2, installed 1"], "2.13.0"))
    path = tmp_path / "r.json"
    path.write_text(json.dumps(stored.to_dict()))
    assert load_result(path) == stored
    path.write_text(json.dumps({**original.to_dict(), "environment": None}))
    assert load_result(path).environment is None


def test_a_null_cell_names_its_reason(tmp_path: Path) -> None:
    write_result(
        tmp_path,
        "ds",
        "run",
        "m",
        metrics={"v": {"a": 50.0, "b": None}},
        intervals={"v": {"a": [40.0, 60.0], "b": [None, None]}},
        undefined={"metrics": {"v": {"b": "one_class"}}},
    )
    table = render_table(TableSpec("ds/run", ("v",), ("a", "b")), tmp_path)
    assert "| `v` | 50.0 [40.0, 60.0] | null (one_class) |" in table


def test_a_paper_table_shows_ours_beside_the_published_number(tmp_path: Path) -> None:
    write_result(
        tmp_path,
        "wikibio",
        "ngram",
        "selfcheck_ngram",
        metrics={"ngram_n1_max": {"nonfact_aucpr": 85.621, "passage_pearson": None}},
        random_baselines={"sentence": {"nonfact_aucpr": 72.956}},
    )
    text = (
        "<!-- results: wikibio/ngram | ngram_n1_max, ngram_n1_max=bertscore, ngram_n1_max=-, random@sentence=random"
        " | nonfact_aucpr, passage_pearson"
        " | paper: table2 -->\n<!-- /results -->"
    )
    table = render(text, tmp_path)
    assert "| `ngram_n1_max` | 85.62 / 85.63 (-0.01) | null / 64.71 |" in table
    assert "| `ngram_n1_max` | 85.62 / 81.96 (+3.66) | null / 58.18 |" in table
    assert "| `ngram_n1_max` | 85.62 / – | null / – |" in table
    assert "| random (sentence level) | 72.96 / 72.96 (-0.00) | – / – |" in table
    with pytest.raises(KeyError, match="no row 'nope'"):
        render(text.replace("=bertscore", "=nope"), tmp_path)


def test_the_readme_paired_table_renders_from_the_results_file(tmp_path: Path) -> None:
    paired = {"sentence": {"rank_mean": {"member.a.x": {"roc_auc": [1.5, -0.25, 3.0]}}}}
    write_result(tmp_path, "ds", "ensemble", "ensemble", paired=paired)
    table = render_paired("ds/ensemble", "sentence", ("rank_mean",), ("roc_auc",), tmp_path)
    assert "| `rank_mean` − `member.a.x` | +1.50 [-0.25, +3.00] |" in table
    with pytest.raises(KeyError, match="no paired differences at level 'response'"):
        render_paired("ds/ensemble", "response", ("rank_mean",), ("roc_auc",), tmp_path)


def test_kept_evaluate_files_import_with_their_provenance() -> None:
    folder = ROOT / "docs" / "results" / "wikibio"
    result = import_kept(
        folder, "wikibio", "selfcheck_nli", "nli", "make wikibio TARGETS=evaluate@selfcheck_nli", "HEAD"
    )
    kept = json.loads((folder / "selfcheck_nli.json").read_text(encoding="utf-8"))
    assert result.metrics == kept and result.intervals["nli"]["nonfact_aucpr"][0] < kept["nli"]["nonfact_aucpr"]
    assert re.fullmatch(r"[0-9a-f]{40}", result.git_revision)
    assert "kept" in result.provenance and "docs/results/wikibio" in result.provenance


def test_a_benchmark_table_renders_from_the_results_file(tmp_path: Path) -> None:
    from hallulab.tooling.bench_record import BenchRow, record, render_section

    path = tmp_path / "results.json"
    rows = [BenchRow("reference", "the reference", 412.0, "s", 1.0), BenchRow("ours", "ours", 13.3, "s", 31.0)]
    record("ngram", rows, {"passages": 40}, threads=2, path=path)
    record("other", [BenchRow("x", "x", 0.5, "s")], {}, path=path)
    results = json.loads(path.read_text(encoding="utf-8"))
    assert list(results) == ["ngram", "other"]  # a second benchmark keeps the first one's section
    table = render_section("ngram", results)
    assert "| the reference | 412.0 s | 1.0x |" in table and "| ours | 13.3 s | 31.0x |" in table
    assert "2 torch threads" in table
    # a section recorded without a reference has no ratio column
    assert render_section("other", results).startswith("| measurement | value |\n|---|---|\n| x | 0.5 s |\n")
    with pytest.raises(KeyError, match="no section 'nli'"):
        render_section("nli", results)


def test_a_side_by_side_bench_rates_every_path_against_its_reference(capsys: pytest.CaptureFixture[str]) -> None:
    from hallulab.tooling.bench_record import print_rows, rate_rows

    rows = rate_rows("greybox", "answers/s", 24, {"reference": ("ref", 12.0), "cold": ("ours", 8.0)})
    assert [(r.key, r.value, r.ratio) for r in rows] == [("greybox_reference", 2.0, 1.0), ("greybox_cold", 3.0, 1.5)]
    print_rows(rows)
    assert "1.5x  ours" in capsys.readouterr().out
    with pytest.raises(ValueError, match="greybox: no measurement"):
        rate_rows("greybox", "answers/s", 24, {})


def test_a_benchmark_names_the_cpu_features_its_ratios_depend_on(tmp_path: Path) -> None:
    from hallulab.tooling.bench_record import cpu_features, render_section

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 amx_tile amx_bf16\n\n")
    assert cpu_features(cpuinfo) == ["avx2", "avx512f", "avx512_bf16", "amx_bf16"]
    assert cpu_features(tmp_path / "absent") == []
    section = {"command": "python b.py", "setup": {}, "rows": [], "machine": {"cpus": 2, "torch_threads": 2}}
    without = render_section("nli", {"nli": section})
    section["machine"]["cpu_features"] = ["avx512_bf16", "amx_bf16"]
    assert "on 2 CPUs (avx512_bf16, amx_bf16), 2 torch threads." in render_section("nli", {"nli": section})
    assert "on 2 CPUs, 2 torch threads." in without  # sections recorded before the field render as they did
    section["machine"]["accelerator"] = "NVIDIA H200"  # a device check's section names its GPU
    assert "on 2 CPUs (avx512_bf16, amx_bf16) and one NVIDIA H200, 2 torch threads." in render_section(
        "nli", {"nli": section}
    )


def test_a_bench_records_the_cuda_device_it_ran_beside_and_none_without_one() -> None:
    import torch

    from hallulab.tooling.bench_record import machine

    recorded = machine(2)
    if torch.cuda.is_available():
        assert recorded["accelerator"] == torch.cuda.get_device_name()
    else:
        assert "accelerator" not in recorded


def test_a_correction_table_publishes_in_percent_with_its_detectors_and_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hallulab.core.config import load_params
    from hallulab.results.published import CORRECTION, collect_correction

    params = load_params(ROOT / "params.yaml")
    from hallulab.correction.run import ROWS

    written = json.loads((ROOT / "metrics" / "toy" / "correction.json").read_text())
    # every row of today's Table 3 (the committed toy run may predate a row)
    written["table3"] = {row: {"factual": 0.25, "factual_change_percent": None} for row in ROWS}
    written["table3"]["sentence_released"] = {"factual": 0.2857, "factual_change_percent": 0.0}
    written["table3_p_no"] = {row: {"factual": 0.5, "factual_change_percent": None} for row in ROWS}
    (tmp_path / "metrics" / "toy").mkdir(parents=True)
    (tmp_path / "metrics" / "toy" / "correction.json").write_text(json.dumps(written))
    monkeypatch.chdir(tmp_path)
    result = collect_correction("toy", "correction_1", "make result METHOD=correction", ["-S", "x=1"], params)
    assert result.method == CORRECTION and result.metrics["sentence_released"]["factual"] == 28.57
    assert result.metrics["baseline"]["factual_change_percent"] is None
    assert result.undefined["metrics"]["baseline"]["factual_change_percent"] == "baseline_row"
    assert result.metrics["fact_dev_p_no"]["factual"] == 50.0
    assert result.undefined["metrics"]["baseline_p_no"]["factual_change_percent"] == "baseline_row"
    undefined = result.undefined["metrics"]
    assert undefined["sentence_released_p_no"]["factual_change_percent"] == "baseline_share_zero_or_undefined"
    assert result.counts == {"dev_passages": written["dev_passages"], "test_passages": written["test_passages"]}
    assert result.diagnostics["fact_detector"] == written["fact_detector"] and "table3" not in result.diagnostics
    assert {"corrector", "judge"} <= {model.role for model in result.models}
    assert "correction" in result.params and "factselfcheck" in result.params
    write_result(tmp_path, "toy", "correction_1", CORRECTION, metrics=result.metrics)
    text = (
        "<!-- results: toy/correction_1 | sentence_released=sentence | factual, factual_change_percent"
        " | paper: fsc-table3 -->\n<!-- /results -->"
    )
    assert "| `sentence_released` | 28.57 / 25.00 (+3.57) | 0.00 / 10.60 (-10.60) |" in render(text, tmp_path)


def test_the_offline_nli_model_publishes_its_heldout_accuracy_and_its_encoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hallulab.core.config import load_params
    from hallulab.results.published import NLI_MODEL, collect_nli_model

    params = load_params(ROOT / "params.yaml")
    written = json.loads((ROOT / "metrics" / "nli_model" / "heldout.json").read_text())
    (tmp_path / "metrics" / "nli_model").mkdir(parents=True)
    (tmp_path / "metrics" / "nli_model" / "heldout.json").write_text(json.dumps(written))
    monkeypatch.chdir(tmp_path)
    result = collect_nli_model("heldout_quick", "make nli-result NLI_PROFILE=quick", ["profile=quick"], params)
    row = result.metrics[f"minilm_offline_{written['profile']}"]
    assert row["open_snli_test"] == written["heldout_accuracy"]["open_snli_test"]
    assert "anli_mean_accuracy" not in row  # the quick recipe measures no ANLI round
    full = {**written, "heldout_accuracy": {"anli_r1_test": 30.0, "anli_r2_test": 33.0, "anli_r3_test": 36.0}}
    (tmp_path / "metrics" / "nli_model" / "heldout.json").write_text(json.dumps({**full, "anli_mean_accuracy": 33.0}))
    ranked = collect_nli_model("heldout_full", "make nli-result NLI_PROFILE=paper", [], params)
    assert ranked.metrics[f"minilm_offline_{written['profile']}"]["anli_mean_accuracy"] == 33.0
    assert result.dataset == result.method == NLI_MODEL and result.overrides == ["profile=quick"]
    assert result.counts["train_pairs"] == written["train"]["by_source"]
    assert "by_source" not in result.diagnostics["train"]
    (encoder,) = result.models
    assert encoder.role == "encoder" and len(encoder.sha256) == 64 and encoder.source.endswith("/model")
    assert encoder.name == "all-MiniLM-L6-v2"  # read from the packaged model card, not typed in


def test_publishing_the_nli_model_names_the_file_after_its_recipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from hallulab.results.published import main

    written = json.loads((ROOT / "metrics" / "nli_model" / "heldout.json").read_text())
    (tmp_path / "metrics" / "nli_model").mkdir(parents=True)
    (tmp_path / "metrics" / "nli_model" / "heldout.json").write_text(json.dumps(written))
    monkeypatch.chdir(tmp_path)
    publish = ["publish", "--command", "make nli-result", "--params", str(ROOT / "params.yaml")]
    assert main([*publish, "--dataset", "nli_model", "--method", "nli_model"]) == 0
    assert (tmp_path / "results" / "nli_model" / f"heldout_{written['profile']}.json").is_file()
    assert main([*publish, "--dataset", "toy", "--method", "selfcheck_ngram"]) == 2
    assert "--name is required for method 'selfcheck_ngram'" in capsys.readouterr().err


def test_a_model_card_title_skips_the_front_matter(tmp_path: Path) -> None:
    from hallulab.results.published import _model_card_title

    (tmp_path / "README.md").write_text("---\nlicense: mit\n# a YAML comment\n---\n\n# the-model\n\n# usage\n")
    assert _model_card_title(tmp_path, "fallback") == "the-model"
    (tmp_path / "README.md").write_text("no heading here\n")
    assert _model_card_title(tmp_path, "fallback") == "fallback"
    assert _model_card_title(tmp_path / "missing", "fallback") == "fallback"


def test_a_table_shows_the_counts_it_names_under_it(tmp_path: Path) -> None:
    """``| n: counts.x, diagnostics.y`` prints how many units the percentages are of; a count
    the file does not hold is an error, never a blank."""
    write_result(
        tmp_path,
        "wikibio",
        "correction_2",
        "correction",
        metrics={"fact": {"factual": 95.35}},
        counts={"test_passages": 20, "dev_passages": 1220},
        diagnostics={"verdicts_unparseable": 253},
    )
    counts = "counts.dev_passages, diagnostics.verdicts_unparseable"
    opening = f"<!-- results: wikibio/correction_2 | fact | factual | n: {counts} -->\n"
    rendered = render(opening + "<!-- /results -->", tmp_path)
    assert "\n\nn: dev_passages 1,220, verdicts_unparseable 253\n<!-- /results -->" in rendered
    with pytest.raises(KeyError, match=r"counts\.absent"):
        render(opening.replace("counts.dev_passages", "counts.absent") + "<!-- /results -->", tmp_path)


def _pending(root: Path, entries: dict[str, dict[str, str]]) -> None:
    (root / RESULTS_DIR / "pending.json").write_text(json.dumps(entries), encoding="utf-8")


def test_a_file_awaiting_republication_says_so_and_marks_the_rows_it_lacks(tmp_path: Path) -> None:
    write_result(tmp_path, "ds", "run", "m", metrics={"old": {"a": 50.0}}, intervals={"old": {"a": [40.0, 60.0]}})
    spec = TableSpec("ds/run", ("old", "new"), ("a",))
    with pytest.raises(KeyError, match="no variant 'new'"):  # without an entry, a missing row is an error
        render_table(spec, tmp_path)
    entry = {"made_at": "0" * 40, "since": "the method changed", "command": "make result X=1"}
    _pending(tmp_path, {"ds/run": entry})
    table = render_table(spec, tmp_path)
    assert table.startswith("> Re-publication pending: these numbers were made at revision `0000000000`, before")
    assert (
        "the method changed; a row marked *pending* is one the new reading adds" in table
        and "`make result X=1`" in table
    )
    assert "| `old` | 50.0 [40.0, 60.0] |" in table and "| `new` | *pending* |" in table
    paper = render_table(TableSpec("ds/run", ("new=-",), ("a",), "table2"), tmp_path)
    assert "| `new` | *pending* / – |" in paper
    # once the file is re-published (its revision moves on), the entry must go
    write_result(tmp_path, "ds", "run", "m", git_revision="1" * 40, metrics={"old": {"a": 1.0}, "new": {"a": 2.0}})
    with pytest.raises(ValueError, match="re-published at 1111111111: remove its entry"):
        render_table(spec, tmp_path)


def test_a_pending_entry_names_a_file_and_says_what_changed(tmp_path: Path) -> None:
    write_result(tmp_path, "ds", "run", "m")
    _pending(tmp_path, {"ds/other": {"made_at": "0" * 40, "since": "x", "command": "make result"}})
    with pytest.raises(ValueError, match="entry 'ds/other' names no results file"):
        render_table(TableSpec("ds/run", (), ("a",)), tmp_path)
    _pending(tmp_path, {"ds/run": {"made_at": "0" * 40}})
    with pytest.raises(ValueError, match="entry 'ds/run' lacks command, since"):
        render_table(TableSpec("ds/run", (), ("a",)), tmp_path)


def test_every_committed_pending_entry_names_the_revision_of_its_file() -> None:
    for file, entry in load_pending(ROOT).items():
        entry.check(load_result(ROOT / RESULTS_DIR / f"{file}.json"))
        assert entry.command.startswith("make result ") and "profile.hallucheck_" not in entry.command


def _settings_of(command: str) -> list[str]:
    """The settings a ``make result`` command composes: its data set and each ``-S`` of its ARGS."""
    words = dict(word.split("=", 1) for word in shlex.split(command)[2:] if "=" in word)
    args = shlex.split(words.get("ARGS", ""))
    return [f"dataset={words['DATASET']}"] + [value for flag, value in itertools.pairwise(args) if flag == "-S"]


def test_every_published_command_composes_with_todays_settings() -> None:
    """A results file's command is how a reader remakes it: each setting it names must still exist
    (a renamed key is caught here; a file whose command changed waits in pending.json with the new one)."""
    from hallulab.core.config import compose

    pending = load_pending(ROOT)
    files_by_settings: dict[tuple[str, ...], list[str]] = {}
    for path in RESULT_FILES:
        key = f"{path.parent.name}/{path.stem}"
        command = pending[key].command if key in pending else load_result(path).command
        if command.startswith("make result "):
            files_by_settings.setdefault(tuple(_settings_of(command)), []).append(key)
    problems = []
    for settings, files in files_by_settings.items():  # many files share their settings: compose each once
        try:
            compose(list(settings))
        except Exception as error:  # every failure is reported with its files
            problems.append(f"{', '.join(files)}: {error}")
    assert not problems, problems
