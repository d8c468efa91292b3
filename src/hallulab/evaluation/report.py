"""Markdown tables that put our metrics beside a paper's (for the README and the note).

``python -m hallulab.evaluation.report metrics/wikibio/selfcheck_ngram.json [--table table7]``
``python -m hallulab.evaluation.report metrics/wikibio/greybox.json --table table8-opt-125m``
``python -m hallulab.evaluation.report metrics/wikibio/selfcheck_*.json --table table2``
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from hallulab.core.io import read_json
from hallulab.evaluation.paper_tables import PAPER_METRICS, TABLES

HEADERS = ("NonFact", "NonFact*", "Factual", "Pearson", "Spearman")


def differences(
    ours: Mapping[str, Mapping[str, float]], paper: Mapping[str, Mapping[str, float]]
) -> dict[str, dict[str, float]]:
    """ours - paper for every cell the paper reports."""
    return {v: {m: ours[v][m] - paper[v][m] for m in PAPER_METRICS} for v in paper if v in ours}


def comparison_table(ours: Mapping[str, Mapping[str, float]], paper: Mapping[str, Mapping[str, float]]) -> str:
    """One row per variant: ours / paper / difference for each of the five metrics."""
    lines = [
        "| variant | " + " | ".join(f"{h} ours / paper (Δ)" for h in HEADERS) + " |",
        "|---|" + "---|" * len(HEADERS),
    ]
    diffs = differences(ours, paper)
    for variant in paper:
        if variant not in ours:
            continue
        cells = [f"{ours[variant][m]:.2f} / {paper[variant][m]:.2f} ({diffs[variant][m]:+.2f})" for m in PAPER_METRICS]
        lines.append(f"| {variant} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("metrics", nargs="+", help="one or more metrics/<dataset>/<method>.json files")
    parser.add_argument("--table", default="table7", choices=sorted(TABLES))
    args = parser.parse_args()
    ours: dict[str, Mapping[str, float]] = {}
    for path in args.metrics:
        ours.update(read_json(path))
    print(comparison_table(ours, TABLES[args.table]))


if __name__ == "__main__":
    main()
