"""What a stranger meets first (the small things of "What a score means"): the mode of the
files the stages write, scores written without a negative zero, help text without reST
roles, the scored-files page's wording, data set names and ``hallulab plan`` outside the
checkout."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hallulab.core.io import atomic_open, write_json


@contextmanager
def _umask(mask: int) -> Iterator[None]:
    before = os.umask(mask)
    try:
        yield
    finally:
        os.umask(before)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_atomic_write_gets_the_usual_mode(tmp_path: Path, mask: int, expected: int) -> None:
    """A file written through the atomic temporary file gets 0666 less the umask, as a plain
    ``open`` gives it, not mkstemp's 0600 (report.html was unreadable to others)."""
    with _umask(mask):
        with atomic_open(tmp_path / "page.html") as handle:
            handle.write("<html></html>")
        write_json(tmp_path / "a.json", {"a": 1})
        with atomic_open(tmp_path / "b.bin", "wb") as handle:
            handle.write(b"\0")
    for name in ("page.html", "a.json", "b.bin"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == expected, name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.bin", "page.html"]  # no temporary left


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_scores_are_written_without_negative_zero(tmp_path: Path, suffix: str) -> None:
    """``hallulab score -o``'s writer turns a score of -0.0 (a negated 0 of a method) into 0.0;
    NaN stays NaN."""
    import math

    import pandas as pd

    from hallulab.cli import write_scores

    scores = pd.DataFrame({"record_id": ["a", "b", "c"], "score": [-0.0, 0.5, float("nan")]})
    out = tmp_path / f"scores{suffix}"
    write_scores(scores, out)
    assert "-0" not in out.read_text(encoding="utf-8", errors="replace") or suffix == ".parquet"
    back = {".csv": pd.read_csv, ".jsonl": lambda p: pd.read_json(p, lines=True), ".parquet": pd.read_parquet}[suffix](
        out
    )
    assert math.copysign(1.0, back["score"][0]) == 1.0
    assert back["score"][1] == 0.5 and math.isnan(back["score"][2])
    assert math.copysign(1.0, scores["score"][0]) == -1.0  # the caller's frame is left as it was


RST_MARKUP = (":class:", ":mod:", ":func:", ":data:", ":meth:", ":attr:", "``")


def test_help_prints_no_rest_markup() -> None:
    """``--help`` of ``hallulab`` and of every subcommand reads as plain terminal text: no reST
    role and no double backticks (the top-level help is the CLI module's docstring)."""
    from hallulab.cli import command_parsers

    for path, parser in command_parsers().items():
        text = parser.format_help()
        found = [markup for markup in RST_MARKUP if markup in text]
        assert not found, f"hallulab {' '.join(path)} --help: {found}"


def test_every_command_has_a_help_and_a_description_and_no_markdown() -> None:
    """Each subcommand has a one-line help (in its parent's list) and a description (its own
    --help); no help or description holds a backtick, literal Markdown on a terminal; every option
    has a help."""
    import argparse

    from hallulab.cli import command_parsers

    found = []
    for path, parser in command_parsers().items():
        where = f"hallulab {' '.join(path)}".strip()
        if not (parser.description or "").strip():
            found.append(f"{where}: no description")
        if "`" in (parser.description or ""):
            found.append(f"{where}: a backtick in the description")
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                listed = {choice.dest: choice.help for choice in action._choices_actions}
                found += [f"{where} {name}: no help" for name in action.choices if not listed.get(name)]
                found += [f"{where} {name}: a backtick in the help" for name, h in listed.items() if "`" in (h or "")]
                continue
            if action.help == argparse.SUPPRESS:
                continue
            name = "/".join(action.option_strings) or action.dest
            if not (action.help or "").strip():
                found.append(f"{where} {name}: no help")
            elif "`" in action.help:
                found.append(f"{where} {name}: a backtick in the help")
    assert not found, "\n".join(found)


def test_terminal_text_renders_roles_and_literals() -> None:
    from hallulab.cli import terminal_text

    text = terminal_text(
        "See :mod:`hallulab.api`, :class:`hallulab.api.Detector`, :func:`~hallulab.api.detect`, "
        ":meth:`Detector.score`, :py:data:`x.Y`, :class:`the graph <hallulab.pipeline.graph.PipelineGraph>` "
        "and ``--variants all``."
    )
    assert text == "See hallulab.api, Detector, detect, score, Y, the graph and --variants all."
    assert terminal_text(None) == ""


def test_api_reference_docstrings_have_no_rest_roles() -> None:
    """The API reference (docs/reference/api.md, ``::: hallulab.api``) renders docstrings as
    Markdown (mkdocs.yml: ``docstring_style: null``), where a reST role prints raw: the module's
    docstring and those of its public objects and their public members use none (double
    backticks are a Markdown code span and render as code)."""
    import inspect
    import re

    import hallulab.api as api

    role = re.compile(r":(?:py:)?(?:class|mod|func|data|meth|attr|exc|obj):`")
    shown: dict[str, str | None] = {"hallulab.api": api.__doc__}
    for name, obj in vars(api).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != api.__name__:
            continue
        shown[name] = inspect.getdoc(obj)
        if inspect.isclass(obj):
            for member, value in vars(obj).items():
                if not member.startswith("_") and (callable(value) or isinstance(value, property)):
                    shown[f"{name}.{member}"] = inspect.getdoc(value)
    assert len(shown) > 3
    assert {where: doc for where, doc in shown.items() if doc and role.search(doc)} == {}


def test_scored_files_page_speaks_to_a_cli_user(tmp_path: Path) -> None:
    """A page of ``hallulab score`` files names no pipeline stage where it has no summary,
    curves or correction table (it is no run); a run's page keeps naming the stage."""
    import json

    import pandas as pd

    from hallulab.report.inputs import ABSENT_IN_A_RUN, ReportInputs
    from hallulab.report.payload import build_payload
    from hallulab.report.scored_file import SCORED_FILES_ABSENT, write_scored_report
    from hallulab.report.units import UnitCatalogue

    records = tmp_path / "records.jsonl"
    records.write_text(json.dumps({"id": "r1", "response": "A sentence.", "samples": ["A sample."]}) + "\n")
    scores = tmp_path / "scores.csv"
    row = {"method": "selfcheck_ngram", "variant": "unigram_max", "level": "sentence", "record_id": "r1"}
    row |= {"unit_id": "r1:0", "unit_index": 0, "sentence_index": 0, "start": 0, "end": 11, "score": 0.5}
    pd.DataFrame([{**row, "text": "A sentence."}]).to_csv(scores, index=False)
    page = write_scored_report([scores], records, tmp_path / "report.html", {}).read_text(encoding="utf-8")
    assert "stage" not in " ".join(SCORED_FILES_ABSENT.values())
    for text in SCORED_FILES_ABSENT.values():
        assert json.dumps(text)[1:-1] in page
    for text in ABSENT_IN_A_RUN.values():
        assert text not in page
    assert (
        "summary stage has not run"
        not in (Path(__file__).parents[1] / "src/hallulab/conf/report/report.js").read_text()
    )

    run = build_payload(ReportInputs("toy", [], {}), UnitCatalogue.build([], {}, {}))
    assert run["absent"] == ABSENT_IN_A_RUN


def test_pipeline_data_set_names_fetch_the_data_set_they_come_from() -> None:
    """Every data set of conf/dataset read from the data root is a name ``hallulab data fetch``
    takes, and fetches the data set holding its file; the CLI's help names the same aliases."""
    from hallulab import cli
    from hallulab.core.config import CONF_DIR, dataset_config
    from hallulab.data import fetch as fetching

    assert (
        cli.dataset_sources() == fetching.dataset_sources() == {"hotpotqa": "sac3_qa_halu", "nq_open": "sac3_qa_halu"}
    )
    read_from_root = 0
    for config in sorted((CONF_DIR / "dataset").glob("*.yaml")):
        cfg = dataset_config(config.stem)
        if cfg.get("source") not in ("local", "auto"):
            continue
        source = fetching.data_source(config.stem)
        read_from_root += 1
        if cfg.get("local_file"):
            assert cfg["local_file"] in {f.target for f in source.files}, config.stem
    assert read_from_root >= 5
    assert fetching.data_source("nq_open") is fetching.data_source("sac3_qa_halu")  # the old name still works
    with pytest.raises(
        fetching.UnknownDataSourceError, match=r"also hotpotqa \(in sac3_qa_halu\), nq_open \(in sac3_qa_halu\)"
    ):
        fetching.data_source("nq")
    help_text = cli.command_parsers()["data", "fetch"].format_help()
    assert "sac3_qa_halu" in " ".join(help_text.split()) and "hotpotqa and nq_open" in " ".join(help_text.split())


def test_data_fetch_takes_a_pipeline_data_set_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``hallulab data fetch nq_open hotpotqa`` fetches sac3_qa_halu, once, and says so."""
    from hallulab import cli
    from hallulab.data import fetch as fetching

    fetched: list[str] = []

    def fake_fetch(name: str, root: Path, **_: object) -> fetching.FetchReport:
        fetched.append(name)
        return fetching.FetchReport(name, root, ())

    monkeypatch.setattr(fetching, "fetch", fake_fetch)
    assert cli.main(["data", "fetch", "nq_open", "hotpotqa", "--root", str(tmp_path)]) == 0
    assert fetched == ["sac3_qa_halu"]
    out = capsys.readouterr().out
    assert "nq_open: comes from sac3_qa_halu" in out and "hotpotqa: comes from sac3_qa_halu" in out


def test_plan_runs_from_any_folder_of_a_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``hallulab plan`` in a folder that is no checkout reads make bench's rates and the toy
    set from the checkout hallulab runs from; an installed package (no checkout) gives the
    one-line error naming the folder looked in and the options that do without the file."""
    from hallulab import plan
    from hallulab.cli import main
    from hallulab.core.config import REPO_ROOT, package_checkout

    assert package_checkout() == REPO_ROOT  # the tests run from a checkout
    monkeypatch.chdir(tmp_path)
    assert main(["plan", "--dataset", "toy", "--no-cache"]) == 0
    assert "Plan for 6 responses of toy" in capsys.readouterr().out

    monkeypatch.setattr(plan, "package_checkout", lambda: None)
    with pytest.raises(plan.PlanError, match=r"perf/results.json: not found under .*--llm-tokens-per-second"):
        plan.bench_rates()


def test_plan_of_some_methods_plans_only_their_stages(capsys: pytest.CaptureFixture[str]) -> None:
    """``--method M`` (repeatable) keeps the stages M's scores need, as the pipeline graph
    orders them; an unknown method is a one-line error listing the registered ones."""
    from hallulab.cli import main
    from hallulab.pipeline.graph import pipeline_graph
    from hallulab.plan import Rates, make_plan

    rates = Rates(100.0, 10.0, 2.0, 1, "stated")
    every = make_plan("toy", rates=rates, use_cache=False)
    some = make_plan("toy", rates=rates, use_cache=False, methods=["selfcheck_nli", "semantic_entropy"])
    wanted = {n.stage for m in ("selfcheck_nli", "semantic_entropy") for n in pipeline_graph().steps_for(m)}
    planned = {s.stage for s in some.stages} | set(some.not_planned) | set(some.no_model_calls)
    assert planned <= wanted and {"generate", "score_selfcheck_nli", "score_semantic_entropy"} <= planned
    assert "score_selfcheck_prompt" not in planned and "score_selfcheck_prompt" in {s.stage for s in every.stages}
    assert some.to_dict()["methods"] == ("selfcheck_nli", "semantic_entropy") and "methods" not in every.to_dict()
    assert "the stages of selfcheck_nli, semantic_entropy" in some.table()

    assert main(["plan", "--dataset", "toy", "--method", "nope", "--llm-tokens-per-second", "1"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("hallulab plan: error: --method: unknown method 'nope'; registered: [")
    assert "'selfcheck_nli'" in err[0] and "'semantic_entropy'" in err[0]


def test_every_method_is_in_the_docs_home_the_citation_and_what_each_method_needs() -> None:
    """Semantic Entropy (and every other registered method) is where a stranger looks first:
    the docs home's table of papers, README's citation section and CITATION.bib, and the tutorial's table of what
    each method needs (one row naming each registered method)."""
    import re

    from hallulab.pipeline.registry import method_names

    repo = Path(__file__).resolve().parents[1]
    home = (repo / "docs" / "index.md").read_text(encoding="utf-8")
    assert "[Semantic Entropy](papers/semantic-entropy.md)" in home
    citation = (repo / "README.md").read_text(encoding="utf-8").split("## Citation", 1)[1].split("## ", 1)[0]
    assert "Semantic Entropy" in citation and "kuhn2023semantic" in citation and "farquhar2024semantic" in citation
    # every key the README names is an entry of CITATION.bib, and CITATION.bib holds no other
    bib_keys = set(re.findall(r"^@\w+\{(\w+),", (repo / "CITATION.bib").read_text(encoding="utf-8"), flags=re.M))
    assert bib_keys == set(re.findall(r"`(\w+\d{4}\w+)`", citation)) | {"hallulab"}
    tutorial = (repo / "docs" / "tutorials" / "score-your-data.md").read_text(encoding="utf-8")
    table = tutorial.split("## What each method needs", 1)[1].split("\n\n## ", 1)[0]
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    named = {name for row in rows for name in re.findall(r"`(\w+)`", row)}
    assert set(method_names()) - named == set()


def test_a_listing_read_by_a_reader_that_stops_early_ends_without_a_traceback() -> None:
    """`hallulab calibrations | head -1`: the reader closes the pipe after one line; the
    command stops quietly instead of printing a BrokenPipeError traceback."""
    import subprocess
    import sys

    listing = subprocess.Popen(
        [sys.executable, "-m", "hallulab.cli", "calibrations"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert listing.stdout is not None and listing.stderr is not None
    listing.stdout.readline()
    listing.stdout.close()  # what `head -1` does once it has its line
    errors = listing.stderr.read().decode()
    listing.wait(timeout=120)
    assert "Traceback" not in errors and "BrokenPipeError" not in errors, errors
