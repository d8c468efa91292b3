"""README result tables rendered from the committed results files (:mod:`hallulab.results`).

A table in the README sits between two markers; the opening one names the results file, the
variants (rows) and the metrics (columns):

    <!-- results: wikibio/factselfcheck_llm3 | fsc_kg_llm_max, fsc_text_max | nonfact_aucpr, roc_auc -->
    ...table written by this module...
    <!-- /results -->

A cell is the value in percent with its 95% bootstrap interval, or ``null (reason)`` where the
metric is undefined on that run (:mod:`hallulab.evaluation.undefined`). Nothing in a table is
typed by hand: ``python -m hallulab.results_render README.md`` rewrites every table, and
``--check`` fails when one differs from its file (the test suite runs the check).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from hallulab.results import RESULTS_DIR, PublishedResult, load_result

MARKER = re.compile(
    r"(?P<open><!-- results: *(?P<file>[\w/.-]+) *\| *(?P<rows>[^|]+?) *\| *(?P<cols>[^|]+?) *-->\n)"
    r"(?P<body>.*?)"
    r"(?P<close><!-- /results -->)",
    re.DOTALL,
)


@dataclass(frozen=True)
class TableSpec:
    """One README table: which results file, which variants as rows, which metrics as columns."""

    file: str
    variants: tuple[str, ...]
    metrics: tuple[str, ...]


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


def cell(result: PublishedResult, variant: str, metric: str) -> str:
    """``86.1 [83.8, 88.3]``, ``86.1`` without an interval, or ``null (reason)``."""
    if variant not in result.metrics:
        raise KeyError(f"results {result.dataset}/{result.name}: no variant {variant!r}")
    value = result.metrics[variant].get(metric)
    if value is None:
        reason = result.undefined.get("metrics", {}).get(variant, {}).get(metric, "undefined")
        return f"null ({reason})"
    low, high = (result.intervals.get(variant, {}).get(metric) or [None, None])[:2]
    if low is None or high is None:
        return f"{value:.1f}"
    return f"{value:.1f} [{low:.1f}, {high:.1f}]"


def render_table(spec: TableSpec, root: Path) -> str:
    result = load_result(root / RESULTS_DIR / f"{spec.file}.json")
    lines = [
        "| variant | " + " | ".join(spec.metrics) + " |",
        "|---|" + "---|" * len(spec.metrics),
    ]
    lines += [f"| `{v}` | " + " | ".join(cell(result, v, m) for m in spec.metrics) + " |" for v in spec.variants]
    return "\n".join(lines) + "\n"


def render(text: str, root: Path) -> str:
    """The document with every marked table rewritten from its results file."""

    def replace(match: re.Match[str]) -> str:
        spec = TableSpec(match["file"], _names(match["rows"]), _names(match["cols"]))
        return match["open"] + render_table(spec, root) + match["close"]

    return MARKER.sub(replace, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("document", nargs="?", default="README.md")
    parser.add_argument("--check", action="store_true", help="fail when a table differs from its file")
    args = parser.parse_args(argv)
    path = Path(args.document)
    text = path.read_text(encoding="utf-8")
    rendered = render(text, path.resolve().parent)
    if args.check:
        if rendered != text:
            print(
                f"{path}: a results table differs from its file; run python -m hallulab.results_render", file=sys.stderr
            )
            return 1
        return 0
    path.write_text(rendered, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
