"""The detector table as a page: every cell of ``results/benchmark.json`` in one sortable table
per data set and level, each metric's 95% interval drawn as a bar, the cells grouped by the
records they ran on (the whole data set, or the subset a cell that calls an LLM runs on), and
each method's name a link to that data set's run page at its scores where that page exists
(``reports/<data set>/index.html``, written by ``python -m hallulab.report``).

    python -m hallulab.report.benchmark_view        # -> reports/benchmark/index.html

A model-limited cell (:mod:`hallulab.benchmark.validity`: flat scores, or an LLM role the model
could not play) is marked, with its reason under its name and on hover; "vs best" compares with
the best among the cells not model-limited, as the table file chose it, and the page states the
rule with the table file's bounds. A cell a paper scored too shows the paper's number under its
metric, with the cell scored by the paper's own metric (:mod:`hallulab.benchmark.paper_numbers`;
the page says which papers' numbers no cell is set beside, and why); an NLI-bound cell names its
NLI model and recipe, and a combining cell its members, under its name.

Like the run pages it is one self-contained HTML file (no network, no server); it holds no
number of its own: the rows are the table file's, read as the table command wrote them, and
each cell's subset is the ``dataset.*`` settings of its results file.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hallulab.benchmark.render import (
    PAPERS_RULE,
    SUBSET_PREFIX,
    column_verdicts,
    model_limited_rule,
    nli_text,
    not_paired_lines,
    whole_table_text,
)
from hallulab.core.io import atomic_open, read_json
from hallulab.report.page import default_path, fill_template
from hallulab.results.published import load_result, result_path

TABLE_FILE = Path("results/benchmark.json")
#: the metric whose paired comparisons the page shows ("vs best", "vs length")
COMPARED = "roc_auc"
#: a cell's results file is ``results/<data set>/<this><method>.json`` (:mod:`hallulab.benchmark.runs`)
CELL_RESULT_PREFIX = "benchmark_"


def opening_view(table: Mapping[str, Any]) -> dict[str, str] | None:
    """The data set and level the page opens on: the column whose cells score the most
    labelled units in all (the sum of its cells' units), the table's broadest evidence, where
    the most methods are compared on the most units (WikiBio's sentences in the committed
    table); ties go to the column with more cells, then to the table's order. Its level is the
    one whose cells score the most units. ``None`` for an empty table."""
    columns = table.get("columns", {})

    def units(rows: Sequence[Mapping[str, Any]]) -> int:
        return sum(int(row.get("units") or 0) for row in rows)

    best: tuple[int, int, int] | None = None
    chosen = None
    for order, (dataset, column) in enumerate(columns.items()):
        rows = list(column.get("rows", {}).values())
        if not rows:
            continue
        key = (units(rows), len(rows), -order)
        if best is None or key > best:
            best, chosen = key, dataset
    if chosen is None:
        return None
    rows = list(columns[chosen]["rows"].values())
    levels = list(dict.fromkeys(str(row["level"]) for row in rows))
    level = max(levels, key=lambda name: (units([r for r in rows if r["level"] == name]), -levels.index(name)))
    return {"dataset": chosen, "level": level}


def cell_subsets(table: Mapping[str, Any], root: Path = Path()) -> dict[tuple[str, str], list[str]]:
    """(data set, method) -> the ``dataset.*`` settings its cell ran with, read from the cell's
    results file (empty: the whole data set); a cell whose results file is absent is left out."""
    found: dict[tuple[str, str], list[str]] = {}
    for dataset, column in table.get("columns", {}).items():
        for cell in column.get("rows", {}):
            method = cell.partition("/")[0]
            path = result_path(dataset, CELL_RESULT_PREFIX + method, root)
            if (dataset, method) not in found and path.is_file():
                overrides = load_result(path).overrides
                found[dataset, method] = [setting for setting in overrides if setting.startswith(SUBSET_PREFIX)]
    return found


def run_page_links(table: Mapping[str, Any], root: Path, page: Path) -> dict[str, str]:
    """Data set -> the address, relative to ``page``, of its run page under ``root`` for each
    column whose run page exists (``python -m hallulab.report`` writes it after a run on that
    data set); a column without one is not linked."""
    links = {}
    for dataset in table.get("columns", {}):
        run_page = root / default_path(dataset)
        if run_page.is_file():
            links[dataset] = Path(os.path.relpath(run_page.resolve(), page.parent.resolve())).as_posix()
    return links


def benchmark_rows(
    table: Mapping[str, Any],
    titles: Mapping[str, str],
    links: Mapping[str, str] | None = None,
    subsets: Mapping[tuple[str, str], Sequence[str]] | None = None,
) -> list[dict[str, Any]]:
    """One row per table cell: data set, level, method and its title, variant, sizes, the
    metrics (point, low, high), the ROC-AUC comparisons, the cost per 1,000 units, its data
    set's run page (``page``, ``None`` where there is none), the ``dataset.*`` settings of
    the subset it ran on (``subset``: empty for the whole data set, ``None`` where unknown) and
    its verdict (``verdict``, ``reason``, ``flat_share``, ``roles``: ``None`` and empty for a
    table file that judges none), and where the table file has them its ``paper`` number, its NLI
    model (``nli``, in words) and a combining cell's ``members``."""
    rows = []
    for dataset, column in table.get("columns", {}).items():
        baselines = set(column.get("baseline", {}).values())
        for cell, row in column.get("rows", {}).items():
            method, _, variant = cell.partition("/")
            subset = (subsets or {}).get((dataset, method))
            rows.append(
                {
                    "dataset": dataset,
                    "level": row["level"],
                    "method": method,
                    "title": titles.get(method, method),
                    "variant": variant,
                    "records": row["records"],
                    "units": row["units"],
                    "metrics": row["metrics"],
                    "vs_best": (row.get("vs_best") or {}).get(COMPARED),
                    "vs_baseline": (row.get("vs_baseline") or {}).get(COMPARED),
                    "baseline": cell in baselines,
                    "cost": row.get("cost"),
                    "page": (links or {}).get(dataset),
                    "subset": None if subset is None else list(subset),
                    "verdict": row.get("verdict"),
                    "reason": row.get("reason"),
                    "flat_share": row.get("flat_share"),
                    "roles": row.get("roles") or [],
                    "paper": row.get("paper"),
                    "nli": _plain(nli_text(row["nli"])) if row.get("nli") else None,
                    "members": row.get("members"),
                }
            )
    return rows


def benchmark_payload(
    table: Mapping[str, Any],
    titles: Mapping[str, str],
    links: Mapping[str, str] | None = None,
    subsets: Mapping[tuple[str, str], Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The page's data: the rows, each column's random scorer per level, the view it opens
    on (:func:`opening_view`), what the whole table costs (the docs' sentence,
    :func:`~hallulab.benchmark.render.whole_table_text`) and the rule that makes a cell
    model-limited with its bounds (:func:`~hallulab.benchmark.render.model_limited_rule`), both
    as plain text: the page sets them as text, not Markdown; and what a paper's number beside a
    cell needs, with the papers' numbers no cell is set beside (``papers``); per data set and
    level, the sentence on which cells are above the column's trivial baseline and which are not
    told apart from the best (``verdicts``, :func:`~hallulab.benchmark.render.column_verdicts`)."""
    whole = whole_table_text(table.get("total"))
    datasets = list(table.get("columns", {}))
    cells = {
        key: f"{titles.get(key.partition('/')[0], key.partition('/')[0])} {key.partition('/')[2]}"
        for column in table.get("columns", {}).values()
        for key in column.get("rows", {})
    }
    verdicts: dict[str, dict[str, str]] = {}
    for (dataset, level), sentence in column_verdicts(table, datasets, cells).items():
        verdicts.setdefault(dataset, {})[level] = sentence
    return {
        "rows": benchmark_rows(table, titles, links, subsets),
        "random": {dataset: column.get("random", {}) for dataset, column in table.get("columns", {}).items()},
        "opens": opening_view(table),
        "total": _plain(whole),
        "model_limited": _plain(model_limited_rule(table)),
        "papers": {"rule": PAPERS_RULE, "not_paired": not_paired_lines()},
        "verdicts": verdicts,
    }


def _plain(markdown: str) -> str:
    return markdown.replace("**", "").replace("`", "")


def render_benchmark(payload: Mapping[str, Any]) -> str:
    return fill_template("benchmark.html", payload, {})


def write_benchmark_view(root: Path = Path(), out: Path | None = None) -> Path:
    """The page of ``root``'s table file; returns its path. A method's name links to its data
    set's run page only where ``root`` holds that page when this runs (``make report`` writes
    the run pages first)."""
    from hallulab.pipeline import registry

    titles = {name: spec.title for name, spec in registry.methods().items()}
    table = read_json(root / TABLE_FILE)
    path = out or root / "reports" / "benchmark" / "index.html"
    links = run_page_links(table, root, path)
    page = render_benchmark(benchmark_payload(table, titles, links, cell_subsets(table, root)))
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path) as handle:
        handle.write(page)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None, help="default: reports/benchmark/index.html")
    args = parser.parse_args(argv)
    if not TABLE_FILE.is_file():
        raise SystemExit(f"{TABLE_FILE} not found: run the table first (make benchmark)")
    path = write_benchmark_view(out=args.out)
    print(f"Detector table: {path} (open it in a browser, no server needed)")


if __name__ == "__main__":
    main()
