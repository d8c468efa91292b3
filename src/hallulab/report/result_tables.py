"""README and documentation result tables rendered from the committed results files (:mod:`hallulab.results`).

A table in the README or in a page under ``docs/`` sits between two markers; the opening one names the results file, the
variants (rows) and the metrics (columns):

    <!-- results: wikibio/factselfcheck_llm3 | fsc_kg_llm_max, fsc_text_max | nonfact_aucpr, roc_auc -->
    ...table written by this module...
    <!-- /results -->

A cell is the value in percent with its 95% bootstrap interval, or ``null (reason)`` where the
metric is undefined on that run (:mod:`hallulab.evaluation.undefined`). A row named
``random@<level>`` shows the random scorer's value at that level, as the evaluation wrote it.

A last field ``n: counts.test_passages, diagnostics.verdicts_unparseable`` shows those counts of
the results file under the table (how many units a percentage is of).

A fourth field compares with a paper's published numbers (a key of
:data:`hallulab.evaluation.paper_tables.PAPER_REFERENCE`); a row may name the paper's row it is
compared with as ``ours=paper``, or ``ours=-`` where the paper has no such row. Each cell is
then ``ours / paper (difference)`` to two decimals, the form the exact reproductions are
judged in:

    <!-- results: wikibio/selfcheck_nli_swaps_wide | nli | nonfact_aucpr, factual_aucpr | paper: table2 -->

A combining method's paired differences against its members (``paired`` in its results file,
:mod:`hallulab.evaluation.paired`) sit between ``<!-- paired: FILE | LEVEL | VARIANTS | METRICS -->``
and ``<!-- /paired -->``: one row per variant and member, each cell the difference in points
with its paired interval, e.g. ``+0.84 [-0.41, +2.10]``.

The benchmark tables (every method on every data set, :mod:`hallulab.benchmark.render`: ROC-AUC,
PR-AUC and PRR from ``results/benchmark.json``) sit between ``<!-- benchmark -->`` and
``<!-- /benchmark -->``; ``<!-- benchmark metrics=roc_auc -->`` renders the ROC-AUC one only, and
``<!-- benchmark-best -->`` … ``<!-- /benchmark-best -->`` the excerpt of each column's best.

A speed benchmark table (``make bench`` writes ``perf/results.json``, :mod:`hallulab.tooling.bench_record`)
sits between ``<!-- bench: SECTION -->`` and ``<!-- /bench -->``.

An excerpt of a committed text file (the toy run's ``metrics/toy/summary.md``) sits between
``<!-- excerpt: PATH | head: N | rows: name, ... -->`` and ``<!-- /excerpt -->``: the file's
first N lines, its headings and table headers, and the table rows (or ``**group**`` rows) whose
first cell is one of the names, in a ``text`` code block (output, not a command to run), with
``...`` where lines were left out.

Every path in a marker is relative to the checkout's root (``--root``, by default the current
folder), whichever page the marker sits in. Nothing in a table or an excerpt is typed by hand:
``python -m hallulab.report.result_tables README.md docs`` rewrites every table of the README and of
every page under ``docs/``, and ``--check`` fails when one differs from its file (the test
suite checks every page).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from hallulab.benchmark.applicability import applicability, benchmark_datasets
from hallulab.benchmark.render import best_table as benchmark_best_table
from hallulab.benchmark.render import render as render_benchmark_tables
from hallulab.benchmark.runs import BenchmarkSettings, cell_runs
from hallulab.benchmark.table import TableRow
from hallulab.benchmark.table import rows as benchmark_rows
from hallulab.benchmark.table_file import read as read_benchmark_table
from hallulab.core.io import read_json
from hallulab.evaluation.paper_tables import PAPER_REFERENCE
from hallulab.pipeline import registry
from hallulab.results.pending import load_pending
from hallulab.results.published import RESULTS_DIR, PublishedResult, load_result
from hallulab.tooling.bench_record import RESULTS as BENCH_RESULTS
from hallulab.tooling.bench_record import render_section

MARKER = re.compile(
    r"(?P<open><!-- results: *(?P<file>[\w/.-]+) *\| *(?P<rows>[^|]+?) *\| *(?P<cols>[^|]+?)"
    r"(?: *\| *paper: *(?P<paper>[\w.-]+))?(?: *\| *n: *(?P<n>[^|]+?))? *-->\n)"
    r"(?P<body>.*?)"
    r"(?P<close><!-- /results -->)",
    re.DOTALL,
)


EXCERPT = re.compile(
    r"(?P<open><!-- excerpt: *(?P<file>[\w/.-]+) *\| *head: *(?P<head>\d+) *\| *rows: *(?P<rows>[^|]*?) *-->\n)"
    r"(?P<body>.*?)"
    r"(?P<close><!-- /excerpt -->)",
    re.DOTALL,
)


PAIRED = re.compile(
    r"(?P<open><!-- paired: *(?P<file>[\w/.-]+) *\| *(?P<level>\w+) *\| *(?P<rows>[^|]+?) *\| *(?P<cols>[^|]+?) *-->\n)"
    r"(?P<body>.*?)"
    r"(?P<close><!-- /paired -->)",
    re.DOTALL,
)


BENCHMARK = re.compile(
    r"(?P<open><!-- benchmark(?: metrics=(?P<metrics>[\w,]+))? -->\n)(?P<body>.*?)(?P<close><!-- /benchmark -->)",
    re.DOTALL,
)
BENCHMARK_BEST = re.compile(
    r"(?P<open><!-- benchmark-best -->\n)(?P<body>.*?)(?P<close><!-- /benchmark-best -->)", re.DOTALL
)


BENCH = re.compile(
    r"(?P<open><!-- bench: *(?P<section>\w+) *-->\n)(?P<body>.*?)(?P<close><!-- /bench -->)",
    re.DOTALL,
)


@dataclass(frozen=True)
class TableSpec:
    """One README table: which results file, which variants as rows, which metrics as columns."""

    file: str
    variants: tuple[str, ...]  # each ``ours`` or ``ours=paper_row``
    metrics: tuple[str, ...]
    paper: str | None = None  # a PAPER_REFERENCE key: cells become ``ours / paper (difference)``
    #: the counts shown under the table: dotted paths into the results file's ``counts`` or
    #: ``diagnostics`` (``counts.test_passages``, ``diagnostics.verdicts_unparseable``)
    counts: tuple[str, ...] = ()


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


NO_PAPER_ROW = "-"  # ``ours=-``: a row the paper has no number for (cells ``ours / –``)
RANDOM_ROW = "random@"  # ``random@sentence``: the random scorer's value at that level


def _values(result: PublishedResult, variant: str) -> dict[str, float | None]:
    if variant.startswith(RANDOM_ROW):
        level = variant.removeprefix(RANDOM_ROW)
        if level not in result.random_baselines:
            raise KeyError(f"results {result.dataset}/{result.name}: no random baseline at level {level!r}")
        return dict(result.random_baselines[level])
    if variant not in result.metrics:
        raise KeyError(f"results {result.dataset}/{result.name}: no variant {variant!r}")
    return result.metrics[variant]


def cell(result: PublishedResult, variant: str, metric: str) -> str:
    """``86.1 [83.8, 88.3]``, ``86.1`` without an interval, ``–`` where the row has no such
    metric (a random baseline's correlations), or ``null (reason)``."""
    values = _values(result, variant)
    if metric not in values:
        return "–"
    value = values[metric]
    if value is None:
        reason = result.undefined.get("metrics", {}).get(variant, {}).get(metric, "undefined")
        return f"null ({reason})"
    low, high = (result.intervals.get(variant, {}).get(metric) or [None, None])[:2]
    if low is None or high is None:
        return f"{value:.1f}"
    return f"{value:.1f} [{low:.1f}, {high:.1f}]"


def paper_cell(result: PublishedResult, variant: str, metric: str, paper_value: float | None) -> str:
    """``81.52 / 81.52 (+0.00)``; either side is ``–`` where it gives no number."""
    values = _values(result, variant)
    value = values.get(metric)
    ours = "–" if metric not in values else "null" if value is None else f"{value:.2f}"
    if paper_value is None:
        return f"{ours} / –"
    if value is None:
        return f"{ours} / {paper_value:.2f}"
    return f"{ours} / {paper_value:.2f} ({value - paper_value:+.2f})"


PENDING_CELL = "*pending*"  # a row the new reading adds to a file awaiting re-publication


def _row(result: PublishedResult, spec: TableSpec, name: str, pending: bool = False) -> str:
    ours, _, paper_row = name.partition("=")
    awaited = pending and not ours.startswith(RANDOM_ROW) and ours not in result.metrics
    if spec.paper is None:
        cells = [PENDING_CELL if awaited else cell(result, ours, m) for m in spec.metrics]
    else:
        if spec.paper not in PAPER_REFERENCE:
            raise KeyError(f"README table for {spec.file}: no paper reference {spec.paper!r}")
        rows = PAPER_REFERENCE[spec.paper].rows
        published = {} if paper_row == NO_PAPER_ROW else rows.get(paper_row or ours)
        if published is None:
            raise KeyError(f"paper reference {spec.paper!r} has no row {paper_row or ours!r}")
        cells = [
            _awaited_paper_cell(published.get(m)) if awaited else paper_cell(result, ours, m, published.get(m))
            for m in spec.metrics
        ]
    label = f"random ({ours.removeprefix(RANDOM_ROW)} level)" if ours.startswith(RANDOM_ROW) else f"`{ours}`"
    return f"| {label} | " + " | ".join(cells) + " |"


def _awaited_paper_cell(paper_value: float | None) -> str:
    return f"{PENDING_CELL} / " + ("–" if paper_value is None else f"{paper_value:.2f}")


def render_table(spec: TableSpec, root: Path) -> str:
    """The table of ``spec``; a file awaiting re-publication (:mod:`hallulab.results.pending`)
    gets its note above the table and ``*pending*`` in the rows it does not have yet."""
    result = load_result(root / RESULTS_DIR / f"{spec.file}.json")
    pending = load_pending(root).get(spec.file)
    header = spec.metrics if spec.paper is None else tuple(f"{m}: ours / paper (Δ)" for m in spec.metrics)
    lines = []
    if pending is not None:
        pending.check(result)
        awaited = any(name.partition("=")[0] not in result.metrics for name in spec.variants if RANDOM_ROW not in name)
        lines += [pending.note(awaited), ""]
    lines += [
        "| variant | " + " | ".join(header) + " |",
        "|---|" + "---|" * len(spec.metrics),
    ]
    lines += [_row(result, spec, name, pending is not None) for name in spec.variants]
    if spec.counts:
        # each count named by its path below counts / diagnostics (``table8.facts_per_sentence.mean``)
        lines += [
            "",
            "n: "
            + ", ".join(
                f"{path.partition('.')[2]} {_count(result, path, pending is not None)}" for path in spec.counts
            ),
        ]
    return "\n".join(lines) + "\n"


def _count(result: PublishedResult, path: str, pending: bool = False) -> str:
    """The value at ``path`` (``counts.x.y`` or ``diagnostics.x``) of a results file, as text;
    ``*pending*`` where a file awaiting re-publication does not have it yet."""
    section, *keys = path.split(".")
    if section not in ("counts", "diagnostics") or not keys:
        raise KeyError(
            f"results {result.dataset}/{result.name}: count {path!r} is not counts.<key> or diagnostics.<key>"
        )
    node: object = result.counts if section == "counts" else result.diagnostics
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            if pending:
                return PENDING_CELL
            raise KeyError(f"results {result.dataset}/{result.name}: no {path!r}")
        node = node[key]
    return f"{node:,}" if isinstance(node, int) else str(node)


def _signed(value: float | None) -> str:
    return "null" if value is None else f"{value:+.2f}"


def render_paired(file: str, level: str, variants: tuple[str, ...], metrics: tuple[str, ...], root: Path) -> str:
    """The paired-difference table of a combining method's results file."""
    result = load_result(root / RESULTS_DIR / f"{file}.json")
    by_variant = result.paired.get(level)
    if not by_variant:
        raise KeyError(f"results {file}: no paired differences at level {level!r}")
    lines = [
        "| variant − member | " + " | ".join(f"{m} (Δ, paired interval)" for m in metrics) + " |",
        "|---|" + "---|" * len(metrics),
    ]
    for variant in variants:
        if variant not in by_variant:
            raise KeyError(f"results {file}: no paired differences for variant {variant!r}")
        for member, by_metric in by_variant[variant].items():
            cells = []
            for metric in metrics:
                point, low, high = by_metric.get(metric, [None, None, None])
                cells.append(f"{_signed(point)} [{_signed(low)}, {_signed(high)}]")
            lines.append(f"| `{variant}` − `{member}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _first_cell(line: str) -> str:
    return line.strip("|").split("|")[0].strip().strip("*") if line.startswith("|") else ""


def render_excerpt(lines: list[str], head: int, rows: tuple[str, ...]) -> str:
    """The kept lines of a file (see the module docstring), ``...`` marking each gap."""
    wanted = set(rows)
    kept: list[str] = []
    skipped = False
    for number, line in enumerate(lines):
        keep = (
            number < head
            or line.startswith("## ")
            or line.startswith("|---")
            or _first_cell(line) in wanted
            or (number + 1 < len(lines) and lines[number + 1].startswith("|---"))  # a table's header
            or (not line.strip() and number + 1 < len(lines) and lines[number + 1].startswith("## "))
            or (not line.strip() and bool(kept) and kept[-1].startswith("## "))
        )
        if not keep:
            skipped = True
            continue
        if skipped and kept:
            kept.append("...")
        skipped = False
        kept.append(line)
    if skipped:
        kept.append("...")
    missing = sorted(wanted - {_first_cell(line) for line in lines})
    if missing:
        raise KeyError(f"excerpt: no row named {missing}")
    return "```text\n" + "\n".join(kept) + "\n```\n"


def render(text: str, root: Path, benchmark: Callable[[], BenchmarkInputs] | None = None) -> str:
    """The document with every marked table rewritten from its results file and every
    excerpt from its text file; ``benchmark`` gives the benchmark tables' inputs (read from
    ``root`` once per call where not given)."""
    benchmark = benchmark or cache(lambda: read_benchmark_inputs(root))

    def replace(match: re.Match[str]) -> str:
        counts = _names(match["n"]) if match["n"] else ()
        spec = TableSpec(match["file"], _names(match["rows"]), _names(match["cols"]), match["paper"], counts)
        return match["open"] + render_table(spec, root) + match["close"]

    def replace_excerpt(match: re.Match[str]) -> str:
        lines = (root / match["file"]).read_text(encoding="utf-8").splitlines()
        return match["open"] + render_excerpt(lines, int(match["head"]), _names(match["rows"])) + match["close"]

    def replace_paired(match: re.Match[str]) -> str:
        table = render_paired(match["file"], match["level"], _names(match["rows"]), _names(match["cols"]), root)
        return match["open"] + table + match["close"]

    def replace_bench(match: re.Match[str]) -> str:
        results = read_json(root / BENCH_RESULTS)
        return match["open"] + render_section(match["section"], results) + match["close"]

    def replace_benchmark(match: re.Match[str]) -> str:
        tables = render_benchmark(root, _names(match["metrics"] or ""), inputs=benchmark())
        return match["open"] + tables + match["close"]

    text = PAIRED.sub(replace_paired, EXCERPT.sub(replace_excerpt, MARKER.sub(replace, text)))

    def replace_benchmark_best(match: re.Match[str]) -> str:
        return match["open"] + render_benchmark(root, best_only=True, inputs=benchmark()) + match["close"]

    text = BENCHMARK.sub(replace_benchmark, BENCH.sub(replace_bench, text))
    return BENCHMARK_BEST.sub(replace_benchmark_best, text)


@dataclass(frozen=True)
class BenchmarkInputs:
    """What the benchmark tables are rendered from: the table's rows, its data sets' names and
    the committed table file. Composing every data set's config to find the columns is the
    costly part, so one rewrite of several documents reads them once."""

    rows: tuple[TableRow, ...]
    names: tuple[str, ...]
    table: Mapping[str, Any]


def read_benchmark_inputs(root: Path) -> BenchmarkInputs:
    methods = registry.methods()
    datasets = benchmark_datasets(methods)
    cells = applicability(methods, datasets)
    runs = cell_runs(cells, datasets, BenchmarkSettings.load(), methods, root=root)
    rows = benchmark_rows(methods, datasets, cells, runs, root)
    return BenchmarkInputs(tuple(rows), tuple(d.name for d in datasets), read_benchmark_table(root) or {})


def render_benchmark(
    root: Path, metrics: Sequence[str] = (), *, best_only: bool = False, inputs: BenchmarkInputs | None = None
) -> str:
    """The benchmark tables (:mod:`hallulab.benchmark.render`) from the results under ``root``
    (or ``inputs`` already read from them): every metric's, or those ``metrics`` names;
    ``best_only``: the excerpt of each column's best."""
    found = read_benchmark_inputs(root) if inputs is None else inputs
    if best_only:
        return benchmark_best_table(found.rows, found.names, found.table)
    return render_benchmark_tables(found.rows, found.names, found.table, metrics)


def documents(paths: Sequence[str | Path]) -> list[Path]:
    """The Markdown files named: a file as it is, a folder as every ``*.md`` under it (sorted)."""
    found: list[Path] = []
    for path in map(Path, paths):
        found += sorted(path.rglob("*.md")) if path.is_dir() else [path]
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "documents", nargs="*", default=["README.md"], help="Markdown files or folders of them (default: README.md)"
    )
    parser.add_argument("--root", default=".", help="the folder the markers' paths are relative to (default: .)")
    parser.add_argument("--check", action="store_true", help="fail when a table differs from its file")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    stale: list[Path] = []
    benchmark = cache(lambda: read_benchmark_inputs(root))  # read once for every document
    for path in documents(args.documents):
        text = path.read_text(encoding="utf-8")
        rendered = render(text, root, benchmark)
        if rendered == text:
            continue
        if args.check:
            stale.append(path)
        else:
            path.write_text(rendered, encoding="utf-8")
    for path in stale:
        print(
            f"{path}: a results table differs from its file; run python -m hallulab.report.result_tables",
            file=sys.stderr,
        )
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
