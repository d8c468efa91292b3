"""The report page (hallulab.report): its data from a run's files, and the page itself driven in
headless Chromium (Debian's chromium + chromium-driver) on the toy run's outputs."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from hallulab.core.units import score_frame
from hallulab.data.schema import GivenClaim, Record
from hallulab.pipeline.unit_texts import DescribedUnit, UnitTexts, one_unit_set
from hallulab.report.declared import DeclaredUnits, UnitFile
from hallulab.report.inputs import CurveFile, NamedUnits, ReportInputs, summary_notes
from hallulab.report.page import embedded_json, render
from hallulab.report.payload import build_payload, curve_groups, percentile_ranks, summary_reasons
from hallulab.report.units import UnitCatalogue, UnitView
from tests.conftest import VENV
from tests.workspace import HANG_GUARD_S, environment

SCREENSHOTS_ENV = "HALLULAB_REPORT_SCREENSHOTS"  # a folder: the browser test saves its screenshots there too


def _passages() -> list[Record]:
    return [
        Record(
            id="r1",
            response="Ada was born in 1815. She wrote </script> notes.",
            sentences=("Ada was born in 1815.", "She wrote </script> notes."),
            samples=("Ada was born in 1815.", "Ada was born in 1816."),
            labels=(0.0, 1.0),
            prompt="Write about Ada Lovelace.",
            claims=(GivenClaim("Ada was born in 1815", label=0.0, sentence_index=0),),
        ),
        Record(id="r2", response="Alan was a logician.", sentences=("Alan was a logician.",), labels=(0.0,)),
    ]


def _frame() -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for record, index, score in (("r1", 0, 0.1), ("r1", 1, 0.9), ("r2", 0, 0.5)):
        rows.append(
            {
                "variant": "v",
                "level": "sentence",
                "record_id": record,
                "unit_id": f"{record}#sentence{index}",
                "unit_index": index,
                "sentence_index": index,
                "score": score,
            }
        )
    rows.append(
        {
            "variant": "v",
            "level": "claim",
            "record_id": "r1",
            "unit_id": "r1#claim0",
            "unit_index": 0,
            "sentence_index": 0,
            "score": float("inf"),
        }
    )
    rows.append(
        {
            "variant": "v",
            "level": "response",
            "record_id": "r1",
            "unit_id": "r1#response",
            "unit_index": 0,
            "score": float("nan"),
        }
    )
    return score_frame([{"sentence_index": None, "start": None, "end": None, **row} for row in rows])


def _inputs() -> ReportInputs:
    summary = pd.DataFrame(
        [["m", "v", "sentence", "NonFact AUC-PR", 70.0, 60.0, 80.0, None, "Pearson", 50.0, 40.0, 60.0, 55.5]],
        columns=[
            "method",
            "variant",
            "level",
            "metric_1",
            "value_1",
            "ci_1_low",
            "ci_1_high",
            "paper_1",
            "metric_2",
            "value_2",
            "ci_2_low",
            "ci_2_high",
            "paper_2",
        ],
    )
    return ReportInputs(
        "unit",
        _passages(),
        {"m": _frame()},
        summary=summary,
        notes=["Profile: quick."],
        method_titles={"m": "A method"},
    )


def test_the_payload_holds_every_scored_unit_with_its_rank_text_and_label() -> None:
    inputs = _inputs()
    payload = build_payload(inputs, UnitCatalogue.build(inputs.records))
    sentences = payload["scores"]["m"]["v"]["sentence"]
    assert sentences["r1"] == [[0, 0.1, 0.0], [1, 0.9, 1.0]]
    assert sentences["r2"] == [[0, 0.5, 0.5]]
    assert payload["scores"]["m"]["v"]["claim"]["r1"] == [[0, 1e308, 0.5]]  # +inf kept as the largest number
    assert "response" not in payload["scores"]["m"]["v"]  # a NaN score is left out, not shown as 0
    claim = payload["units"]["m"]["claim"]["r1"][0]
    assert (claim["t"], claim["l"], claim["si"]) == ("Ada was born in 1815", 0.0, 0)
    assert payload["records"][0]["sentences"][1] == {"text": "She wrote </script> notes.", "label": 1.0}
    assert payload["methods"] == [
        {
            "name": "m",
            "title": "A method",
            "variants": [{"name": "v", "levels": ["claim", "response", "sentence"], "units": "m"}],
        }
    ]
    assert payload["summary"]["rows"][0][12] == 55.5


def test_the_page_embeds_its_data_so_that_no_text_closes_the_script_early() -> None:
    inputs = _inputs()
    page = render(build_payload(inputs, UnitCatalogue.build(inputs.records)))
    data = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S)
    assert data is not None
    assert json.loads(data.group(1))["records"][0]["sentences"][1]["text"] == "She wrote </script> notes."
    assert not re.search(r"<script[^>]+src=", page) and "http://" not in page.replace("http://www.w3.org", "")
    assert embedded_json({"a": "</b>"}) == '{"a":"<\\/b>"}'


def test_ranks_and_the_units_keys_of_the_registered_declarations() -> None:
    """A method's variants share one set of units, except where its declaration's units differ
    by variant (HalluCheck's facts, one set per tagging)."""
    from hallulab.report.page import registered_unit_declarations

    assert percentile_ranks(pd.Series([3.0, 1.0, 2.0, 2.0])).tolist() == [1.0, 0.0, 0.5, 0.5]
    catalogue = UnitCatalogue.build(_passages(), [NamedUnits(found, ()) for found in registered_unit_declarations()])
    assert catalogue.key("hallucheck", "hallucheck_ner_greedy_align") == "hallucheck:ner"
    assert catalogue.key("hallucheck", "hallucheck_pos_greedy") == "hallucheck:pos"
    assert catalogue.key("ccp", "ccp_k3_claimpref") == "ccp"


def test_the_registered_declarations_name_the_units_of_the_methods_that_define_or_require_them() -> None:
    """A method's own declaration names its units at its level; an artifact's names the units
    of the methods that require it, at its level; a method that requires neither (unit length)
    shows the units the records spell out."""
    from hallulab.report.page import registered_unit_declarations

    named = {(found.texts.level, found.source.name): found.methods for found in registered_unit_declarations()}
    assert named == {
        ("fact", "hallucheck"): ("hallucheck",),
        ("prompt", "self_familiarity"): ("self_familiarity",),
        ("claim", "claims"): ("ccp",),
        ("fact", "knowledge_graphs"): ("factselfcheck",),
    }


def test_a_methods_own_declaration_comes_before_the_first_required_artifacts() -> None:
    """At a level, a method's units are named by its own declaration, else by the first artifact
    it requires that declares the level; an artifact no method takes units from is left out."""
    from hallulab.methods.raw_scores import RawScores
    from hallulab.pipeline.spec import NO_MODEL_CALLS, ArtifactSpec, MethodSpec, StepInputs
    from hallulab.report.declared import declared_units

    def texts(level: str) -> UnitTexts:
        return UnitTexts(level, read=lambda files: ())

    artifacts = {
        "first": ArtifactSpec("first", "-", units=texts("claim")),
        "second": ArtifactSpec("second", "-", units=texts("claim")),
        "unused": ArtifactSpec("unused", "-", units=texts("fact")),
    }
    fields = {"title": "-", "paper": "-", "section": "-", "level": "claim", "requires": ("second", "first")}
    own = {"score": StepInputs(), "raw": RawScores, "calls": NO_MODEL_CALLS, "units": texts("claim")}
    methods = {
        "reads_second": MethodSpec("reads_second", **fields),
        "own": MethodSpec("own", **fields, **own),
        "no_claims": MethodSpec("no_claims", **{**fields, "level": "sentence"}),
    }
    found = {(d.source.kind, d.source.name): d.methods for d in declared_units(methods, artifacts)}
    assert found == {("method", "own"): ("own",), ("artifact", "second"): ("reads_second",)}


def _declared(level: str, methods: tuple[str, ...], unit_set: Any = one_unit_set) -> DeclaredUnits:
    """A declaration of ``methods``' units at ``level`` (its reader unused: the units are given)."""
    return DeclaredUnits(UnitFile("artifact", "a"), UnitTexts(level, lambda files: (), (), unit_set), methods)


def test_a_declared_unit_takes_the_place_of_the_records_text_and_keeps_their_label() -> None:
    """A declaration's text and sentence replace the records' (a text of None keeps the
    records'), with its details; the label is the records'; a variant reads the unit set its
    declaration names for it; a method the declaration does not name sees the records' units."""
    named = [
        NamedUnits(_declared("claim", ("m",)), (DescribedUnit("r1", 0, "Ada, born 1815", 1),)),
        NamedUnits(
            _declared("fact", ("m",), unit_set=lambda variant: variant.split("_")[0]),
            (DescribedUnit("r1", 0, "Ada", unit_set="x"), DescribedUnit("r1", 0, "1815", unit_set="y")),
        ),
        NamedUnits(_declared("prompt", ("m",)), (DescribedUnit("r1", 0, details=(("concept", "Ada Lovelace"),)),)),
    ]
    catalogue = UnitCatalogue.build(_passages(), named)
    assert catalogue.unit("m", "v", "claim", "r1", 0) == UnitView(0, 1, "Ada, born 1815", 0.0)
    assert catalogue.unit("other", "v", "claim", "r1", 0) == UnitView(0, 0, "Ada was born in 1815", 0.0)
    assert catalogue.unit("m", "y_1", "fact", "r1", 0) == UnitView(0, None, "1815")
    assert catalogue.unit("m", "z_1", "fact", "r1", 0).text == "(fact 0)"  # a set nothing defines
    assert catalogue.unit("m", "v", "prompt", "r1", 0) == UnitView(
        0, None, "Write about Ada Lovelace.", None, (("concept", "Ada Lovelace"),)
    )
    assert (catalogue.key("m", "x_1"), catalogue.key("other", "x_1")) == ("m:x", "other")


def test_summary_notes_rejoin_wrapped_lines() -> None:
    markdown = (
        "# hallulab summary: toy\n\nProfile: quick (fast smoke run,\nnear chance).\nLLMs by role: smollm2.\n\n## x\n"
    )
    assert summary_notes(markdown) == ["Profile: quick (fast smoke run, near chance).", "LLMs by role: smollm2."]


@pytest.mark.slow
def test_a_ccp_claim_shows_each_words_ccp_and_they_multiply_to_its_score(toy_run: Any) -> None:
    """Eq. 7 word by word: 1 - prod_j CCP_word(j) is the claim's score (prod aggregation), for
    two variants that differ in K and NLI context."""
    import math

    from hallulab.report.inputs import load_inputs
    from hallulab.report.page import registered_unit_declarations

    inputs = load_inputs("toy", toy_run.root, units=registered_unit_declarations())
    catalogue = UnitCatalogue.build(inputs.records, inputs.named_units, inputs.details)
    scores = inputs.scores["ccp"]
    claims = scores[scores["variant"].isin(["ccp_k10_claimpref", "ccp_k3_nocontext"]) & (scores["level"] == "claim")]
    assert len(claims) > 10
    doubted = 0
    for row in claims.itertuples():
        view = catalogue.unit("ccp", row.variant, "claim", row.record_id, int(row.unit_index))
        values = [float(value.removeprefix("CCP ")) for _, value in view.details]
        assert values and all(0.0 <= v <= 1.0 for v in values), view
        assert 1.0 - math.prod(values) == pytest.approx(row.score, abs=0.01), (row.variant, view.text)
        doubted += any(v < 0.5 for v in values)
    assert doubted, "some claim has a word the NLI model doubts"
    baseline = catalogue.unit("ccp", "maxprob", "claim", claims.iloc[0].record_id, int(claims.iloc[0].unit_index))
    assert baseline.details == ()  # MaxProb has no words to show


# --- the page in a real browser, on the toy run's outputs ------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        if os.environ.get("CI"):
            raise RuntimeError("chromium and chromium-driver are not installed (.ci/run installs them)")
        pytest.skip("needs Debian's chromium and chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1300,1600",
    ):
        options.add_argument(flag)
    session = webdriver.Chrome(service=Service(driver), options=options)
    try:
        yield session
    finally:
        session.quit()


def _screenshot(browser: Any, folder: Path, name: str) -> None:
    browser.save_screenshot(str(folder / name))
    if os.environ.get(SCREENSHOTS_ENV):
        target = Path(os.environ[SCREENSHOTS_ENV])
        target.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(target / name))


def _link_targets(browser: Any) -> list[Path]:
    """The file each link of the page opens (its address without the fragment: the page itself
    for a link within it)."""
    from urllib.parse import unquote, urlparse

    from selenium.webdriver.common.by import By

    hrefs = [a.get_attribute("href") or "" for a in browser.find_elements(By.CSS_SELECTOR, "a[href]")]
    assert all(href.startswith("file://") for href in hrefs), hrefs  # nothing on the network
    return [Path(unquote(urlparse(href).path)) for href in hrefs]


def _fits_the_window(browser: Any, width: int) -> None:
    """The page at a window ``width`` px wide: the detector table needs no horizontal scrollbar."""
    browser.set_window_size(width, 1000)
    inner, page, table, box = browser.execute_script(
        "const t = document.getElementById('benchmark-table'), b = document.getElementById('table-box');"
        "return [window.innerWidth, [document.documentElement.scrollWidth, document.documentElement.clientWidth],"
        " [t.scrollWidth, t.clientWidth], [b.scrollWidth, b.clientWidth]]"
    )
    assert abs(inner - width) <= 16, inner
    for scroll, client in (page, table, box):
        assert scroll <= client, (page, table, box)


@pytest.mark.browser
def test_the_detector_table_page_draws_and_sorts_in_chromium(browser: Any, tmp_path: Path) -> None:
    """reports/benchmark/index.html on the committed table file and the cells' results files: it
    opens on the column with the most labelled units (WikiBio's sentences), fits a 1,400 px
    window, groups each column's cells by the records they ran on (the whole data set or the
    subset of the cells that call an LLM) with each row's records, sorts within a group by
    ROC-AUC and again by a click, links a method only to a run page on disk, shows no literal
    Markdown, and says what the whole table costs."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from hallulab.core.io import read_json
    from hallulab.report.benchmark_view import opening_view, write_benchmark_view

    table = read_json(Path("results/benchmark.json"))
    (tmp_path / "results").mkdir()
    shutil.copy("results/benchmark.json", tmp_path / "results" / "benchmark.json")
    for dataset in table["columns"]:
        (tmp_path / "results" / dataset).mkdir()
        for found in Path("results", dataset).glob("benchmark_*.json"):
            shutil.copy(found, tmp_path / found)
    run_page = tmp_path / "reports" / "wikibio" / "index.html"  # the one data set with a run page
    run_page.parent.mkdir(parents=True)
    run_page.write_text("<!DOCTYPE html><title>wikibio</title>", encoding="utf-8")
    browser.set_window_size(1400, 1000)
    browser.get(write_benchmark_view(tmp_path).as_uri())
    assert not [entry for entry in browser.get_log("browser") if entry.get("level") == "SEVERE"]

    # it opens on the column the table file's rule picks: WikiBio's sentences
    assert opening_view(table) == {"dataset": "wikibio", "level": "sentence"}
    assert Select(browser.find_element(By.ID, "dataset")).first_selected_option.get_attribute("value") == "wikibio"
    assert Select(browser.find_element(By.ID, "level")).first_selected_option.get_attribute("value") == "sentence"
    _fits_the_window(browser, 1400)

    # WikiBio's cells: all 238 passages, then the 40 the cells that call an LLM ran on, each row
    # under its group's heading and saying its records
    column = table["columns"]["wikibio"]["rows"]
    shown = browser.find_elements(By.CSS_SELECTOR, "#benchmark-table tr.group, #benchmark-table tr[data-cell]")
    headings = [row.text for row in shown if "group" in (row.get_attribute("class") or "")]
    assert [h.split(" (")[0] for h in headings] == ["All 238 records", "40 records"], headings
    assert "the subset -S dataset.limit=40" in headings[1]
    heading = ""
    cells = 0
    for row in shown:
        if "group" in (row.get_attribute("class") or ""):
            heading = row.text
            continue
        records = column[row.get_attribute("data-cell")]["records"]
        assert f"{records} records" in heading, (row.text, heading)
        assert row.find_element(By.CSS_SELECTOR, "td.records").text.startswith(f"{records} · ")
        cells += 1
    assert cells == len(column)
    assert "grouped by the records they ran on" in browser.find_element(By.ID, "grouping").text
    # a model-limited cell is marked, its reason under its name and on hover; the rule is stated
    limited = browser.find_element(By.CSS_SELECTOR, 'tr[data-cell="selfcheck_prompt/prompt"]')
    reason = column["selfcheck_prompt/prompt"]["reason"]
    assert "model-limited" in (limited.get_attribute("class") or "") and reason in limited.text
    assert limited.find_element(By.CSS_SELECTOR, "span.limited").get_attribute("title") == reason
    valid = browser.find_element(By.CSS_SELECTOR, 'tr[data-cell="selfcheck_ngram/ngram_n1_max"]')
    assert "model-limited" not in (valid.get_attribute("class") or "")
    assert browser.find_element(By.ID, "model-limited").text.startswith("‡ A cell is model-limited when")

    # every link opens a file on disk: WikiBio's run page, from each of its rows
    targets = _link_targets(browser)
    assert len(targets) == len(column) and all(target.is_file() for target in targets), targets
    assert set(targets) == {run_page.resolve()}
    # no literal Markdown: the page's text has no backtick
    assert "`" not in browser.find_element(By.TAG_NAME, "body").text
    _screenshot(browser, tmp_path, "benchmark-wikibio.png")

    Select(browser.find_element(By.ID, "dataset")).select_by_value("nq_open")
    assert not _link_targets(browser)  # nq_open has no run page: no link
    column = table["columns"]["nq_open"]["rows"]

    def groups() -> list[list[float]]:
        found: list[list[float]] = []
        for row in browser.find_elements(By.CSS_SELECTOR, "#benchmark-table tr.group, #benchmark-table tr[data-cell]"):
            if "group" in (row.get_attribute("class") or ""):
                found.append([])
            else:
                found[-1].append(float(row.find_element(By.CSS_SELECTOR, 'td[data-metric="roc_auc"]').text.split()[0]))
        return found

    roc = groups()
    assert len(roc) == 2 and sum(map(len, roc)) == len(column)  # nq_open labels one level, the response
    assert all(values == sorted(values, reverse=True) for values in roc)  # ROC-AUC, best first in each group
    browser.find_element(By.CSS_SELECTOR, 'th[data-column="roc_auc"]').click()  # the same column again: worst first
    assert all(values == sorted(values) for values in groups())
    _fits_the_window(browser, 1400)
    assert browser.find_element(By.ID, "whole-table").text.startswith("The whole table: its ")
    # the column's verdict: which cells are above length and which are not told apart from the best
    verdict = browser.find_element(By.ID, "verdict").text
    best = table["columns"]["nq_open"]["best"]["response"]["roc_auc"]
    assert verdict.startswith("nq_open (response), by ROC-AUC") and "above the length baseline:" in verdict
    from hallulab.pipeline import registry

    method, variant = best.split("/")
    assert f"; not told apart from the best ({registry.method(method).title} {variant}): " in verdict, verdict
    _screenshot(browser, tmp_path, "benchmark-nq_open.png")


@pytest.mark.slow
@pytest.mark.browser
def test_make_run_names_the_report_page_and_the_page_works_in_chromium(
    toy_run: Any, browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page = toy_run.root / "reports" / "toy" / "index.html"
    assert f"Report: {page.relative_to(toy_run.root)}" in toy_run.output
    assert page.stat().st_size < 5_000_000
    browser.get(page.as_uri())
    errors = [entry for entry in browser.get_log("browser") if entry.get("level") == "SEVERE"]
    assert not errors, errors  # a script error would leave the page blank
    assert browser.find_element(By.ID, "dataset").text == "toy"
    assert browser.find_elements(By.CSS_SELECTOR, "#summary-table tr")  # the summary table is drawn

    # sort the summary by its first value column, largest first
    header = browser.find_element(By.CSS_SELECTOR, '#summary-table th[data-column="value_1"]')
    header.click()
    browser.find_element(By.CSS_SELECTOR, '#summary-table th[data-column="value_1"]').click()
    columns = browser.find_elements(By.CSS_SELECTOR, "#summary-table th")
    column = [th.get_attribute("data-column") for th in columns].index("value_1")
    cells = [
        row.find_elements(By.TAG_NAME, "td")[column].text
        for row in browser.find_elements(By.CSS_SELECTOR, "#summary-table tr")[1:]
    ]
    values = [float(c) for c in cells if c and not c.startswith("n/a")]
    assert values == sorted(values, reverse=True) and len(values) > 10
    # an undefined metric reads n/a with the evaluation's reason, never as a blank
    for cell in browser.find_elements(By.CSS_SELECTOR, "#summary-table td.na"):
        assert cell.text.startswith("n/a") and cell.find_element(By.CSS_SELECTOR, ".reason").text

    # a record and a sentence-level method: the response's sentences are coloured, labels marked
    Select(browser.find_element(By.ID, "record")).select_by_value("toy-curie")
    Select(browser.find_element(By.ID, "method")).select_by_value("selfcheck_ngram")
    sentences = browser.find_elements(By.CSS_SELECTOR, "#response span.unit")
    assert [s.text for s in sentences][1] == "She was born in Vienna in 1871."
    assert all("score" in (s.get_attribute("title") or "") for s in sentences)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#response .mark.bad")) == 2  # the toy labels two
    _screenshot(browser, tmp_path, "report-ngram.png")

    # HalluCheck: its NER facts with the question and the decision path of every answer, in the
    # token-F1 reading (the headline's judge leaves a fact without a verdict when the 135M model's
    # reply is not the released list, and the page shows only the units a variant scored)
    Select(browser.find_element(By.ID, "method")).select_by_value("hallucheck")
    Select(browser.find_element(By.ID, "variant")).select_by_value("hallucheck_ner_greedy_f1")
    facts = browser.find_elements(By.CSS_SELECTOR, '#units table[data-level="fact"] tr[data-unit]')
    assert facts
    detail = facts[0].text
    assert "question" in detail and "alignment" in detail and "token F1" in detail
    browser.execute_script("document.getElementById('explorer-section').scrollIntoView()")
    _screenshot(browser, tmp_path, "report-hallucheck.png")

    # FactSelfCheck: knowledge-graph triples; the fact's text is a triple
    Select(browser.find_element(By.ID, "method")).select_by_value("factselfcheck")
    triples = browser.find_elements(By.CSS_SELECTOR, '#units table[data-level="fact"] td.unit-text')
    assert triples and all(t.text.startswith("(") and t.text.count(",") >= 2 for t in triples)

    # the page's address names the choice, and reloading it restores the choice
    assert "record=toy-curie" in browser.current_url and "method=factselfcheck" in browser.current_url
    browser.refresh()
    assert Select(browser.find_element(By.ID, "method")).first_selected_option.get_attribute("value") == "factselfcheck"

    # a curve is drawn, and the correction table is there
    curves = Select(browser.find_element(By.ID, "curve"))
    assert any(o.text.startswith("K (alternatives): ccp") for o in curves.options)
    assert curves.options[0].text.startswith("precision-recall: all methods")  # methods side by side first
    drawn = len(browser.find_elements(By.CSS_SELECTOR, "#chart svg path[data-series]"))
    legend = browser.find_elements(By.CSS_SELECTOR, "#chart [data-legend]")
    assert drawn >= 1 and len(legend) >= drawn  # the legend itself: test_the_run_page_opens_its_curves_...
    assert browser.find_elements(By.CSS_SELECTOR, "#correction-table tr")
    browser.execute_script("document.getElementById('curves-section').scrollIntoView()")
    _screenshot(browser, tmp_path, "report-curves.png")
    logs = [entry for entry in browser.get_log("browser") if entry.get("level") == "SEVERE"]
    assert not logs, logs


def _run_page_without_a_run(root: Path) -> Path:
    """The toy set's run page from the committed metrics/toy (summary, notes, curves, correction)
    and two records scored by one method, as ``python -m hallulab.report --dataset toy`` writes
    it after a run (no DAG run)."""
    from hallulab.pipeline import paths
    from hallulab.report.page import write_report

    shutil.copytree(Path("metrics/toy"), root / paths.metrics_dir("toy"))
    records = root / paths.records("toy")
    records.parent.mkdir(parents=True)
    records.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in _passages()), encoding="utf-8")
    scores = root / paths.unit_scores("selfcheck_ngram", "toy")
    scores.parent.mkdir(parents=True)
    _frame().to_parquet(scores)
    return write_report("toy", root=root)


@pytest.mark.browser
def test_the_run_page_opens_its_curves_on_the_headline_variants_in_chromium(browser: Any, tmp_path: Path) -> None:
    """The run page (the toy set's committed metrics, no DAG run): the summary's notes show their
    Markdown code as code, no literal backtick; a chart of every method opens with each method's
    headline variants (the detector table's) and a legend of one row per method, its other
    variants folded; opening them and clicking one draws it, clicking the method hides its
    lines; every link opens a file on disk."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from hallulab.pipeline import registry

    browser.set_window_size(1400, 1200)
    browser.get(_run_page_without_a_run(tmp_path).as_uri())
    assert not [entry for entry in browser.get_log("browser") if entry.get("level") == "SEVERE"]
    notes = browser.find_element(By.ID, "notes")
    assert "make plots" in [code.text for code in notes.find_elements(By.TAG_NAME, "code")]
    assert "`" not in browser.find_element(By.TAG_NAME, "body").text
    assert all(target.is_file() for target in _link_targets(browser))

    curve = Select(browser.find_element(By.ID, "curve"))
    assert curve.first_selected_option.text == "precision-recall: all methods, nonfact"
    csvs = sorted(Path("metrics/toy/pr").glob("*.csv"))
    frames = {path.stem: pd.read_csv(path) for path in csvs}
    variants = {
        method: list(dict.fromkeys(frame.loc[frame["task"] == "nonfact", "variant"]))
        for method, frame in frames.items()
        if "task" in frame and (frame["task"] == "nonfact").any()
    }  # each method's curves of the nonfact task (a file with no labelled unit has none)
    headline = set()
    for method, names in variants.items():
        named = [v for v in names if v in registry.methods()[method].benchmark_variants]
        headline |= {f"{method}: {v}" for v in named or names[:1]}
    drawn = {path.get_attribute("data-series") for path in browser.find_elements(By.CSS_SELECTOR, "#chart path")}
    assert drawn == headline and len(headline) < sum(map(len, variants.values())) / 3

    rows = browser.find_elements(By.CSS_SELECTOR, "#chart .legend-method")
    assert sorted(row.get_attribute("data-method") for row in rows) == sorted(variants)
    for row in rows:  # one line per method: its folded variants are not shown
        shown = [item for item in row.find_elements(By.CSS_SELECTOR, "[data-legend]") if item.is_displayed()]
        assert len({item.location["y"] for item in shown}) <= 1, row.text
        assert row.size["height"] < 2 * row.find_element(By.CSS_SELECTOR, ".legend-name").size["height"], row.text
    browser.execute_script("document.getElementById('curves-section').scrollIntoView()")
    _screenshot(browser, tmp_path, "report-curves-default.png")

    ccp = browser.find_element(By.CSS_SELECTOR, '#chart .legend-method[data-method="ccp"]')
    ccp.find_element(By.TAG_NAME, "summary").click()
    ccp = browser.find_element(By.CSS_SELECTOR, '#chart .legend-method[data-method="ccp"]')
    folded = [item for item in ccp.find_elements(By.CSS_SELECTOR, "details [data-legend]")]
    assert len(folded) == len(variants["ccp"]) - 1 and all(item.is_displayed() for item in folded)
    added = folded[0].get_attribute("data-legend")
    folded[0].click()
    drawn = {path.get_attribute("data-series") for path in browser.find_elements(By.CSS_SELECTOR, "#chart path")}
    assert drawn == headline | {added}
    assert browser.find_element(By.CSS_SELECTOR, '#chart .legend-method[data-method="ccp"] details').get_attribute(
        "open"
    )
    browser.execute_script("document.getElementById('curves-section').scrollIntoView()")
    _screenshot(browser, tmp_path, "report-curves-expanded.png")
    browser.find_element(By.CSS_SELECTOR, '#chart [data-legend-method="ccp"]').click()  # ccp's lines off
    drawn = {path.get_attribute("data-series") for path in browser.find_elements(By.CSS_SELECTOR, "#chart path")}
    assert drawn == {name for name in headline if not name.startswith("ccp: ")}
    browser.find_element(By.CSS_SELECTOR, '#chart [data-legend-method="ccp"]').click()  # its headline back
    drawn = {path.get_attribute("data-series") for path in browser.find_elements(By.CSS_SELECTOR, "#chart path")}
    assert drawn == headline
    assert not [entry for entry in browser.get_log("browser") if entry.get("level") == "SEVERE"]


def test_an_undefined_summary_value_carries_the_evaluations_reason() -> None:
    """summary.csv leaves an undefined metric empty; the page says n/a and why (the reason the
    evaluate stage wrote into the method's .info.json), for the value and its interval."""
    inputs = _inputs()
    inputs.summary.loc[0, ["value_2", "ci_2_low", "ci_2_high"]] = None  # type: ignore[union-attr]
    undefined = {"metrics": {"v": {"passage_pearson": "constant_values"}}, "intervals": {}}
    payload = build_payload(replace(inputs, undefined={"m": undefined}), UnitCatalogue.build(inputs.records))
    assert payload["summary"]["reasons"] == [
        {"value_2": "no spread: constant values", "ci_2": "no spread: constant values"}
    ]
    assert summary_reasons({"method": "m", "level": "sentence", "variant": "v", "value_1": 1.0}, {}) == {}


def test_curves_of_several_methods_share_one_chart_per_task() -> None:
    pr = pd.DataFrame({"task": ["nonfact"] * 4, "variant": ["a", "a", "b", "b"], "recall": [0, 1, 0, 1]})
    pr["precision"] = [1.0, 0.5, 0.9, 0.4]
    curves = [CurveFile("pr", "m1", pr), CurveFile("pr", "m2", pr.assign(variant=["c", "c", "d", "d"]))]
    groups = curve_groups(curves)
    combined = groups[0]
    assert combined.title == "precision-recall: all methods, nonfact"
    assert [s.name for s in combined.series] == ["m1: a", "m2: c", "m1: b", "m2: d"]  # one line per method first
    assert [g.title for g in groups[1:]] == ["precision-recall: m1, nonfact", "precision-recall: m2, nonfact"]
    assert len(curve_groups(curves[:1])) == 1  # one method: no combined chart
    # a method's headline variant leads and is drawn at first; a method with none named, its first
    chart = curve_groups(curves, {"m1": ("b",), "m2": ("x",)})[0]
    assert [(s.name, s.method, s.headline) for s in chart.series] == [
        ("m1: b", "m1", True),
        ("m2: c", "m2", True),
        ("m1: a", "m1", False),
        ("m2: d", "m2", False),
    ]


@pytest.mark.slow
def test_make_report_rewrites_the_page_of_every_data_set_run(toy_run: Any) -> None:
    """`make report` (docs/how-to/report.md) after `make run`: the toy set's page is written again."""
    page = toy_run.root / "reports" / "toy" / "index.html"
    page.unlink()
    done = subprocess.run(
        ["make", "-o", f"{VENV}/.hallulab-installed", "report", f"VENV={VENV}"],
        cwd=toy_run.root,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert page.is_file() and 'id="report-data"' in page.read_text(encoding="utf-8")


def test_the_page_draws_each_committed_calibrations_held_out_reliability(tmp_path: Path) -> None:
    """A run on a data set with committed calibrations shows, beside its curves, each
    calibration of a method it ran: held-out bins before and after calibration, named with
    their ECE and interval as the calibration file stores them (issue: what a score means)."""
    from hallulab.pipeline import paths
    from hallulab.report.inputs import load_inputs

    committed = Path("results/calibration/nq_open")
    ngram, greybox = committed / "selfcheck_ngram.ngram_n1_max.json", committed / "greybox.max_neglogp.json"
    stored = json.loads(ngram.read_text(encoding="utf-8"))
    (tmp_path / committed).mkdir(parents=True)
    for path in (ngram, greybox):  # greybox did not run: its calibration is not drawn
        shutil.copy(path, tmp_path / path)
    records = tmp_path / paths.records("nq_open")
    records.parent.mkdir(parents=True)
    record = {"id": "r1", "response": "Paris.", "sentences": ["Paris."], "prompt": "Capital?"}
    records.write_text(json.dumps(record) + "\n")
    scores = tmp_path / paths.unit_scores("selfcheck_ngram", "nq_open")
    scores.parent.mkdir(parents=True)
    _frame().to_parquet(scores)

    inputs = load_inputs("nq_open", tmp_path)
    payload = build_payload(inputs, UnitCatalogue.build(inputs.records))
    reliability = [c for c in payload["curves"] if c["title"].startswith("reliability:")]
    assert [c["title"] for c in reliability] == [
        f"reliability: selfcheck_ngram, ngram_n1_max (response), {stored['split']['heldout_units']} "
        "held-out units of nq_open, 10 bins"
    ]
    diagonal, before, after = reliability[0]["series"]
    assert diagonal["points"] == [(0.0, 0.0), (1.0, 1.0)]
    ece = stored["heldout"]["isotonic"]["ece"]
    assert after["name"] == f"isotonic, ECE {ece[0]:.3f} [{ece[1]:.3f}, {ece[2]:.3f}]"
    assert after["points"] == [(p, rate) for p, rate, _ in stored["reliability"]["isotonic"]]
    assert before["name"].startswith("uncalibrated (min-max scaled), ECE ")
    assert before["points"] == [(p, rate) for p, rate, _ in stored["reliability"]["uncalibrated"]]

    edited = tmp_path / ngram
    edited.write_text(edited.read_text(encoding="utf-8").replace('"seed": 0', '"seed": 1'), encoding="utf-8")
    with pytest.raises(ValueError, match="does not match its sha256"):
        load_inputs("nq_open", tmp_path)


def test_the_detector_table_page_holds_every_cell_of_the_table_file(tmp_path: Path) -> None:
    """reports/benchmark/index.html: one row per cell of results/benchmark.json with its three
    metrics (point and interval), its ROC-AUC comparisons, its cost, the length rows marked
    as the baseline; the page embeds that data and draws it with no network."""
    from hallulab.core.io import read_json
    from hallulab.report.benchmark_view import benchmark_payload, write_benchmark_view

    table = read_json(Path("results/benchmark.json"))
    payload = benchmark_payload(table, {"length": "Unit length"})
    cells = {(d, cell) for d, column in table["columns"].items() for cell in column["rows"]}
    assert {(r["dataset"], f"{r['method']}/{r['variant']}") for r in payload["rows"]} == cells
    for row in payload["rows"]:
        source = table["columns"][row["dataset"]]["rows"][f"{row['method']}/{row['variant']}"]
        assert row["metrics"] == source["metrics"] and len(row["metrics"]["roc_auc"]) == 3
        assert row["vs_best"] == (source.get("vs_best") or {}).get("roc_auc")
        assert row["baseline"] == (row["method"] == "length")
        assert row["cost"] == source.get("cost")
        assert (row["verdict"], row["reason"], row["roles"]) == (source["verdict"], source["reason"], source["roles"])
    assert {r["title"] for r in payload["rows"] if r["method"] == "length"} == {"Unit length"}
    # the rule that makes a cell model-limited, with the table file's bounds, as plain text
    flat = table["protocol"]["model_limited"]["flat_share_at_least"]
    assert payload["model_limited"].startswith(f"A cell is model-limited when one score holds {flat:.0%} or more")
    # what the whole table costs, the docs' sentence as plain text
    assert payload["total"].startswith(f"The whole table: its {table['total']['cells']} filled cells")
    assert "**" not in payload["total"] and "`" not in payload["total"]
    # the column verdicts of docs/benchmark.md, per data set and level, as plain text
    for dataset, column in table["columns"].items():
        for level, best in column.get("best", {}).items():
            if best.get("roc_auc") is not None:
                sentence = payload["verdicts"][dataset][level]
                assert sentence.startswith("above the length baseline: ") and "`" not in sentence
                method, variant = best["roc_auc"].split("/")
                named = f"{'Unit length' if method == 'length' else method} {variant}"
                assert f"; not told apart from the best ({named}): " in sentence, sentence
    (tmp_path / "results").mkdir()
    shutil.copy("results/benchmark.json", tmp_path / "results" / "benchmark.json")
    page = write_benchmark_view(tmp_path).read_text(encoding="utf-8")
    data = re.search(r'<script type="application/json" id="benchmark-data">(.*?)</script>', page, re.S)
    assert data is not None
    embedded = json.loads(data.group(1))["rows"]
    untitled = [{k: v for k, v in row.items() if k != "title"} for row in payload["rows"]]
    assert [{k: v for k, v in row.items() if k != "title"} for row in embedded] == json.loads(json.dumps(untitled))
    assert json.loads(data.group(1))["total"] == payload["total"] and 'id="whole-table"' in page
    assert not re.search(r"<script[^>]+src=", page) and "__STYLE__" not in page
    assert {row["page"] for row in embedded} == {None}  # no run page under tmp_path: no link


def test_the_detector_table_page_opens_on_the_most_units_and_links_only_run_pages_on_disk(tmp_path: Path) -> None:
    """The view the page opens on is the table file's column with the most labelled units (ties:
    more cells, then the table's order), at its level with the most; a method's name links to
    its data set's run page only where that page exists, relative to wherever the page is
    written."""
    from hallulab.report.benchmark_view import opening_view, run_page_links

    def cell(level: str, units: int) -> dict[str, Any]:
        return {"level": level, "units": units}

    table = {
        "columns": {
            "a": {"rows": {"m/v": cell("x", 5)}},
            "b": {"rows": {"m/v": cell("x", 2), "n/v": cell("y", 3)}},
            "c": {"rows": {"m/v": cell("x", 1)}},
        }
    }
    assert opening_view(table) == {"dataset": "b", "level": "y"}  # 5 units as a, in more cells
    assert opening_view({"columns": {}}) is None
    (tmp_path / "reports" / "a").mkdir(parents=True)
    (tmp_path / "reports" / "a" / "index.html").write_text("", encoding="utf-8")
    assert run_page_links(table, tmp_path, tmp_path / "reports" / "benchmark" / "index.html") == {
        "a": "../a/index.html"
    }
    elsewhere = tmp_path / "out" / "table.html"
    elsewhere.parent.mkdir()
    assert run_page_links(table, tmp_path, elsewhere) == {"a": "../reports/a/index.html"}
    assert all((elsewhere.parent / link).is_file() for link in run_page_links(table, tmp_path, elsewhere).values())
