"""The detector table as a page: every cell of ``results/benchmark.json`` in one sortable table
per data set and level, each metric's 95% interval drawn as a bar, and each method's name a
link to that data set's run page at its scores (``reports/<data set>/index.html``).

    python -m hallulab.report.benchmark_view        # -> reports/benchmark/index.html

Like the run pages it is one self-contained HTML file (no network, no server); it holds no
number of its own: the rows are the table file's, read as the table command wrote them.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hallulab.benchmark.render import whole_table_text
from hallulab.core.io import atomic_open, read_json
from hallulab.report.page import fill_template

TABLE_FILE = Path("results/benchmark.json")
#: the metric whose paired comparisons the page shows ("vs best", "vs length")
COMPARED = "roc_auc"


def benchmark_rows(table: Mapping[str, Any], titles: Mapping[str, str]) -> list[dict[str, Any]]:
    """One row per table cell: data set, level, method and its title, variant, sizes, the
    metrics (point, low, high), the ROC-AUC comparisons and the cost per 1,000 units."""
    rows = []
    for dataset, column in table.get("columns", {}).items():
        baselines = set(column.get("baseline", {}).values())
        for cell, row in column.get("rows", {}).items():
            method, _, variant = cell.partition("/")
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
                }
            )
    return rows


def benchmark_payload(table: Mapping[str, Any], titles: Mapping[str, str]) -> dict[str, Any]:
    """The page's data: the rows, each column's random scorer per level, and what the whole
    table costs (the docs' sentence, :func:`~hallulab.benchmark.render.whole_table_text`, as
    plain text: the page sets it as text, not Markdown)."""
    whole = whole_table_text(table.get("total"))
    return {
        "rows": benchmark_rows(table, titles),
        "random": {dataset: column.get("random", {}) for dataset, column in table.get("columns", {}).items()},
        "total": whole.replace("**", "").replace("`", ""),
    }


def render_benchmark(payload: Mapping[str, Any]) -> str:
    return fill_template("benchmark.html", payload, {})


def write_benchmark_view(root: Path = Path(), out: Path | None = None) -> Path:
    """The page of ``root``'s table file; returns its path."""
    from hallulab.pipeline import registry

    titles = {name: spec.title for name, spec in registry.methods().items()}
    page = render_benchmark(benchmark_payload(read_json(root / TABLE_FILE), titles))
    path = out or root / "reports" / "benchmark" / "index.html"
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
