"""The published numbers of :mod:`hallulab.evaluation.paper_tables` and the pages that set them
beside ours: every ``paper:`` marker names a reference, a row and a metric that exist; every
reference's metrics are metrics the results files use; every reference is shown somewhere (a
page's marker or a method's summary); and a changed paper number changes its rendered page, so
the page check (``tests/test_results.py``) covers the paper's side of a table too."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from hallulab.evaluation import paper_tables
from hallulab.evaluation.paper_tables import PAPER_REFERENCE
from hallulab.pipeline.registry import methods
from hallulab.report.result_tables import MARKER, NO_PAPER_ROW, documents, render
from hallulab.results.published import RESULTS_DIR, load_result

ROOT = Path(__file__).resolve().parents[1]
PAGES = documents([ROOT / "README.md", ROOT / "docs"])


def _paper_markers() -> list[tuple[Path, re.Match[str]]]:
    return [(page, m) for page in PAGES for m in MARKER.finditer(page.read_text(encoding="utf-8")) if m["paper"]]


PAPER_MARKERS = _paper_markers()


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _paper_rows(marker: re.Match[str]) -> list[tuple[str, str]]:
    """(ours, paper row) of every marker row that names one (``ours=-`` names none)."""
    rows = []
    for name in _names(marker["rows"]):
        ours, _, paper_row = name.partition("=")
        if paper_row != NO_PAPER_ROW:
            rows.append((ours, paper_row or ours))
    return rows


def _results_metrics() -> set[str]:
    """Every metric key of the committed results files (variants and random baselines)."""
    found: set[str] = set()
    for path in sorted((ROOT / RESULTS_DIR).glob("*/*.json")):
        result = load_result(path)
        for values in [*result.metrics.values(), *result.random_baselines.values()]:
            found |= set(values)
    return found


def _marker_id(page: Path, marker: re.Match[str]) -> str:
    return f"{page.relative_to(ROOT)}:{marker['paper']}:{marker['file']}:{_names(marker['rows'])[0]}"


def test_pages_set_paper_numbers_beside_ours() -> None:
    assert PAPER_MARKERS
    assert {"ccp-vicuna13b", "hallucheck-nq_open", "hallucheck-hotpotqa", "fsc-table5"} <= {
        m["paper"] for _, m in PAPER_MARKERS
    }


@pytest.mark.parametrize(("page", "marker"), PAPER_MARKERS, ids=[_marker_id(p, m) for p, m in PAPER_MARKERS])
def test_a_paper_marker_names_a_reference_rows_and_metrics_it_has(page: Path, marker: re.Match[str]) -> None:
    """The reference exists, every paper row a marker names is one of its rows, and each such
    row publishes at least one of the marker's columns (a row of ``–`` only is a wrong name)."""
    assert marker["paper"] in PAPER_REFERENCE, f"{page}: no paper reference {marker['paper']!r}"
    rows = PAPER_REFERENCE[marker["paper"]].rows
    columns = set(_names(marker["cols"]))
    named = _paper_rows(marker)
    assert named, f"{page}: a paper marker that compares no row"
    for ours, paper_row in named:
        assert paper_row in rows, f"{page}: {marker['paper']!r} has no row {paper_row!r} (for {ours!r})"
        assert columns & set(rows[paper_row]), f"{page}: row {paper_row!r} publishes none of {sorted(columns)}"


@pytest.mark.parametrize("key", sorted(PAPER_REFERENCE))
def test_a_reference_uses_the_metric_names_of_the_results_files(key: str) -> None:
    metrics = {metric for row in PAPER_REFERENCE[key].rows.values() for metric in row}
    assert metrics and metrics <= _results_metrics(), sorted(metrics - _results_metrics())


def test_every_reference_is_shown_beside_ours() -> None:
    """A published number no page and no method's summary shows could drift unseen."""
    shown = {m["paper"] for _, m in PAPER_MARKERS} | {spec.paper_table for spec in methods().values()}
    assert set(PAPER_REFERENCE) <= shown, sorted(set(PAPER_REFERENCE) - shown)


def test_a_reference_in_another_setting_says_so() -> None:
    """The references set beside ours in another setting (model, data set) name it in the label."""
    for key, setting in {
        "ccp-vicuna13b": "Vicuna 13b",
        "hallucheck-nq_open": "Mistral-7B",
        "hallucheck-hotpotqa": "Mistral-7B",
        "fsc-table5": "not FactualBio",
    }.items():
        assert setting in PAPER_REFERENCE[key].label, key


def _first_published(marker: re.Match[str]) -> tuple[str, str]:
    """The first (paper row, metric) of a marker with a published number."""
    rows = PAPER_REFERENCE[marker["paper"]].rows
    for _, paper_row in _paper_rows(marker):
        for metric in _names(marker["cols"]):
            if rows[paper_row].get(metric) is not None:
                return paper_row, metric
    raise AssertionError(f"marker {marker.group(0)!r} shows no published number")


FIRST_MARKER_OF = {m["paper"]: (page, m) for page, m in reversed(PAPER_MARKERS)}


@pytest.mark.parametrize("key", sorted(FIRST_MARKER_OF))
def test_a_changed_paper_number_changes_its_page(key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page check compares a page with its rendering; a paper number edited in
    paper_tables.py renders differently, so the page check fails until the page is rendered."""
    page, marker = FIRST_MARKER_OF[key]
    text = page.read_text(encoding="utf-8")
    assert render(text, ROOT) == text
    paper_row, metric = _first_published(marker)
    reference = PAPER_REFERENCE[key]
    rows = {name: dict(values) for name, values in reference.rows.items()}
    rows[paper_row][metric] += 1.0
    monkeypatch.setitem(paper_tables.PAPER_REFERENCE, key, replace(reference, rows=rows))
    assert render(text, ROOT) != text
