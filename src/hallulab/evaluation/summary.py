"""The run's summary: one row per method variant, readable in a 100-column terminal.

For each method and variant: the headline metrics of every level the data set labels, with
their bootstrap 95% interval, the paper's value beside where the paper reports the same
data set, and which models made the numbers. Written as ``metrics/<dataset>/summary.md``
(aligned Markdown) and ``summary.csv`` (``pandas.read_csv`` loads it), and printed.

    python -m hallulab.evaluation.summary --dataset toy      # print the last run's summary
"""

from __future__ import annotations

import argparse
import math
import textwrap
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from hallulab.core.io import read_json
from hallulab.evaluation.paper_tables import PAPER_REFERENCE
from hallulab.pipeline import paths
from hallulab.pipeline.controls import AggregateControls
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.spec import MethodSpec

#: The two headline metrics of each level (key, column title).
HEADLINES: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {
    "sentence": (("nonfact_aucpr", "NonFact AUC-PR"), ("passage_pearson", "Pearson")),
    "claim": (("claim_roc_auc", "ROC-AUC"), ("claim_pr_auc", "PR-AUC")),
    "fact": (("fact_roc_auc", "ROC-AUC"), ("fact_pr_auc", "PR-AUC")),
    "response": (("response_roc_auc", "AUC-ROC"), ("response_ap", "AP")),
    "prompt": (("prompt_auc", "AUC"), ("prompt_f1", "F1")),
}
LEVEL_TITLES = {
    "sentence": "sentence level (AUC-PR / passage Pearson, %)",
    "claim": "claim level (%)",
    "fact": "fact level (%)",
    "response": "response level (%)",
    "prompt": "prompt level (%)",
}


@dataclass(frozen=True)
class SummaryRow:
    method: str
    variant: str
    level: str
    metric_1: str
    value_1: float | None
    ci_1: tuple[float | None, float | None]
    paper_1: float | None
    metric_2: str
    value_2: float | None
    ci_2: tuple[float | None, float | None]
    paper_2: float | None


def _number(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def rows_for(spec: MethodSpec, dataset: str, metrics_dir: Path) -> list[SummaryRow]:
    metrics_path = metrics_dir / f"{spec.name}.json"
    if not metrics_path.is_file():
        return []
    metrics = read_json(metrics_path)
    intervals_path = metrics_dir / f"{spec.name}.ci.json"
    intervals = read_json(intervals_path) if intervals_path.is_file() else {}
    reference = PAPER_REFERENCE.get(spec.paper_table or "")
    paper = reference.rows if reference is not None and reference.dataset == dataset else {}
    info_path = metrics_dir / f"{spec.name}.info.json"
    headline = (
        AggregateControls.from_record(read_json(info_path).get("controls", {}), str(info_path)).headline_variants
        if info_path.is_file()
        else None
    )
    rows = []
    for variant, values in metrics.items():
        if headline and variant not in headline:
            continue  # the method names its headline variants; the rest are in the metric files
        for level, ((key_1, title_1), (key_2, title_2)) in HEADLINES.items():
            if key_1 not in values and key_2 not in values:
                continue
            ranges = intervals.get(variant, {})
            published = paper.get(variant, {})
            rows.append(
                SummaryRow(
                    spec.name,
                    variant,
                    level,
                    title_1,
                    _number(values.get(key_1)),
                    tuple(_number(x) for x in ranges.get(key_1, [None, None])),  # type: ignore[arg-type]
                    _number(published.get(key_1)),
                    title_2,
                    _number(values.get(key_2)),
                    tuple(_number(x) for x in ranges.get(key_2, [None, None])),  # type: ignore[arg-type]
                    _number(published.get(key_2)),
                )
            )
    return rows


def frame(rows: Sequence[SummaryRow]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "method": r.method,
                "variant": r.variant,
                "level": r.level,
                "metric_1": r.metric_1,
                "value_1": r.value_1,
                "ci_1_low": r.ci_1[0],
                "ci_1_high": r.ci_1[1],
                "paper_1": r.paper_1,
                "metric_2": r.metric_2,
                "value_2": r.value_2,
                "ci_2_low": r.ci_2[0],
                "ci_2_high": r.ci_2[1],
                "paper_2": r.paper_2,
            }
            for r in rows
        ],
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


def _cell(value: float | None, ci: tuple[float | None, float | None]) -> str:
    if value is None:
        return "n/a"
    low, high = ci
    if low is None or high is None:
        return f"{value:5.1f}"
    return f"{value:5.1f} [{low:5.1f},{high:5.1f}]"


def _paper(value: float | None) -> str:
    return "" if value is None else f"{value:5.1f}"


def render(
    rows: Sequence[SummaryRow],
    dataset: str,
    notes: Sequence[str],
    counts: Mapping[str, Any],
) -> str:
    """Aligned Markdown, at most 100 characters a line."""
    lines = [f"# hallulab summary: {dataset}", ""]
    lines += [wrapped for line in notes for wrapped in textwrap.wrap(line, 100, break_on_hyphens=False)]
    lines.append("")
    for level in HEADLINES:
        chosen = [r for r in rows if r.level == level]
        if not chosen:
            continue
        first, second = chosen[0].metric_1, chosen[0].metric_2
        lines.append(f"## {LEVEL_TITLES[level]}: {counts.get(level, '')}".rstrip(": "))
        lines.append("")
        header = f"| {'method / variant':<30} | {first:<19} | {'paper':>5} | {second:<19} | {'paper':>5} |"
        lines.append(header[:100])
        lines.append(f"|{'-' * 32}|{'-' * 21}|{'-' * 7}|{'-' * 21}|{'-' * 7}|")
        method = None
        for row in chosen:
            if row.method != method:
                method = row.method
                lines.append(f"| {('**' + method + '**'):<30} | {'':<19} | {'':>5} | {'':<19} | {'':>5} |")
            name = "  " + row.variant
            lines.append(
                f"| {name[:30]:<30} | {_cell(row.value_1, row.ci_1):<19} | {_paper(row.paper_1):>5} "
                f"| {_cell(row.value_2, row.ci_2):<19} | {_paper(row.paper_2):>5} |"
            )
        lines.append("")
    if not rows:
        lines.append("No metrics: the data set labels none of the units the methods score.")
        lines.append("")
    return "\n".join(lines)


def level_counts(specs: Sequence[MethodSpec], metrics_dir: Path) -> dict[str, str]:
    """level -> a short description of what was labelled (from the first method's info file)."""
    out: dict[str, str] = {}
    for spec in specs:
        path = metrics_dir / f"{spec.name}.info.json"
        if not path.is_file():
            continue
        for level, counts in read_json(path).get("levels", {}).items():
            if level in out:
                continue
            if level == "sentence":
                out[level] = (
                    f"{counts.get('labelled_sentences')} labelled sentences in "
                    f"{counts.get('labelled_passages')} passages"
                )
            else:
                out[level] = f"{counts.get('scored_labelled_units')} labelled units"
    return out


def paper_notes(specs: Sequence[MethodSpec], dataset: str) -> list[str]:
    labels = []
    for spec in specs:
        reference = PAPER_REFERENCE.get(spec.paper_table or "")
        if reference is not None and reference.dataset == dataset:
            labels.append(f"{spec.name}: {reference.label}")
    if not labels:
        return [f"No published numbers on the data set '{dataset}': the paper columns are empty."]
    return ["Paper columns: " + "; ".join(labels) + "."]


def correction_section(path: Path) -> list[str]:
    """FactSelfCheck's Table 3 as this run computed it, when the correct stage ran."""
    if not path.is_file():
        return []
    result = read_json(path)
    lines = [
        f"## correction (FactSelfCheck Table 3): {result.get('test_passages')} test passages, "
        f"corrector {result.get('corrector')}, judge {result.get('judge')}",
        "",
        f"| {'row':<23} | {'factual':>16} | {'non-factual':>16} | {'refused':>16} |",
        f"|{'-' * 25}|{'-' * 18}|{'-' * 18}|{'-' * 18}|",
    ]
    readings = [("", result.get("table3") or {}), (" P(No)", result.get("table3_p_no") or {})]
    for suffix, table in readings:
        for level, row in table.items():
            cells = []
            for verdict in ("factual", "non-factual", "refused"):
                share, change = row.get(verdict), row.get(f"{verdict}_change_percent")
                text = "n/a" if share is None else f"{share:.2f}" + (f" ({change:+.1f}%)" if change is not None else "")
                cells.append(f"{text if verdict in row else '–':>16}")
            lines.append(f"| {level + suffix:<23} | " + " | ".join(cells) + " |")

    def listed(chosen: dict[str, object]) -> str:
        shown = (f"{k} {v:.3g}" if isinstance(v, int | float) else f"{k} {v or 'none'}" for k, v in chosen.items())
        return ", ".join(shown)

    released = dict(result.get("released_thresholds") or {})
    note = ""
    if released:
        note += (
            "*_released rows (Table 3's rule, as the released code chooses): thresholds of highest sentence-level "
            f"F1 on the labels of all {released.pop('passages', '?')} labelled passages, the corrected ones among "
            f"them, the fact threshold over each sentence's mean fact score: {listed(released)}. "
            "*_dev rows (this project's): "
        )
    chosen = listed(result.get("thresholds", {}))
    note += f"{'t' if note else 'T'}hresholds chosen on {result.get('dev_passages')} dev passages: {chosen}."
    if result.get("table3_p_no"):
        note += (
            " P(No) rows: the judge's verdict read from its first reply token (non-factual when P(No) > P(Yes)),"
            " the reading that needs no reply format; it has no refused class."
        )
    if result.get("no_dev_threshold"):
        note += " No hallucinated sentence among the dev labels: nothing was flagged, every level is the baseline's."
    lines += ["", *textwrap.wrap(note, 100), ""]
    return lines


def summarise(specs: Sequence[MethodSpec], dataset: str, model_notes: Sequence[str]) -> tuple[str, pd.DataFrame]:
    metrics_dir = Path(paths.metrics_dir(dataset))
    rows = [row for spec in specs for row in rows_for(spec, dataset, metrics_dir)]
    unevaluated = [
        spec.name
        for spec in specs
        if (metrics_dir / f"{spec.name}.json").is_file() and not read_json(metrics_dir / f"{spec.name}.json")
    ]
    notes = [*model_notes, *paper_notes(specs, dataset)]
    if unevaluated:
        notes.append("Scored, not evaluated (the data set labels none of their units): " + ", ".join(unevaluated) + ".")
    notes.append("Plots: `make plots`, then open dvc_plots/index.html.")
    text = render(rows, dataset, notes, level_counts(specs, metrics_dir))
    extra = correction_section(Path(paths.correction_metrics(dataset)))
    return (text + "\n" + "\n".join(extra)).rstrip() + "\n", frame(rows)


SUMMARY_PARAMS = ("profile", "llms", "nli.name", "bertscore.name")


def model_notes(view: ParamsView) -> list[str]:
    """Which models made the numbers, from the params the summary stage declares."""
    roles: dict[str, list[str]] = defaultdict(list)
    for role, entry in sorted(view.get("llms").items()):
        roles[str(entry)].append(role)
    llms = "; ".join(f"{name} ({', '.join(r)})" for name, r in roles.items())
    profile = view.get("profile")
    return [
        f"Profile: {profile.get('name')} ({profile.get('description', '')}).",
        f"LLMs by role: {llms}.",
        f"NLI model: {view.get('nli.name')}; BERTScore encoder: {view.get('bertscore.name')}.",
    ]


def main(argv: list[str] | None = None) -> None:
    """Print the data set's summary table. After an experiment that targeted some methods only
    (``make experiment TARGETS=aggregate_...``) the summary stage has not run: the table is then
    rendered from the metrics present, labelled partial, and nothing is written."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="toy")
    parser.add_argument("--params", default="params.yaml")
    args = parser.parse_args(argv)
    path = Path(paths.summary(args.dataset, "md"))
    if path.is_file():
        print(path.read_text(encoding="utf-8"))
        return
    if not any(Path(paths.metrics_dir(args.dataset)).glob("*.json")):
        raise SystemExit(f"{path} not found and no metrics for {args.dataset!r}: run the pipeline first (make run)")
    from hallulab.pipeline import registry

    view = ParamsView.load(args.params, SUMMARY_PARAMS, "summary")
    partial = "Partial: the summary stage has not run; only the methods evaluated so far are listed."
    text, _ = summarise(list(registry.methods().values()), args.dataset, [partial, *model_notes(view)])
    print(text)


if __name__ == "__main__":
    main()
