"""Every committed benchmark cell calibrated, and every calibration carried to the other data
sets of its level: the files ``python -m hallulab.calibration`` writes from committed files alone.

* ``results/calibration/<data set>/<method>.<variant>.json``: one calibration per variant of each
  cell's labelled units (``results/benchmark/<data set>/<method>.units.csv``), fitted and evaluated
  as :mod:`hallulab.calibration.fit` says;
* ``results/calibration.json``: each calibration's held-out figures, and the **transfer** of each
  to every other data set whose cell holds the same method and variant at the same level (its
  map and threshold applied, unchanged, to all of that data set's units: how far a threshold
  travels);
* ``docs/calibration.md``: the page rendered from ``results/calibration.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hallulab.benchmark.runs import CELLS_DIR
from hallulab.benchmark.units import CellUnits, read_units
from hallulab.calibration.fit import (
    Calibration,
    CalibrationError,
    CalibrationSettings,
    flag_figures,
    probability_figures,
)
from hallulab.calibration.measure import ECE_BINS
from hallulab.calibration.stored import CALIBRATIONS_DIR, write_calibration
from hallulab.core.io import atomic_open

SUMMARY = Path("results/calibration.json")
PAGE = Path("docs/calibration.md")


@dataclass(frozen=True)
class CellKey:
    dataset: str
    method: str
    variant: str


def cell_units(root: Path) -> dict[CellKey, CellUnits]:
    """Every variant's labelled units of every committed cell, by data set, method and variant."""
    found = {}
    for path in sorted((root / CELLS_DIR).glob("*/*.units.csv")):
        method = path.name.removesuffix(".units.csv")
        for variant, units in read_units(path).items():
            found[CellKey(path.parent.name, method, variant)] = units
    return found


def calibration_path(root: Path, key: CellKey) -> Path:
    return root / CALIBRATIONS_DIR / key.dataset / f"{key.method}.{key.variant}.json"


def _figures(readings: dict[str, Any]) -> dict[str, Any]:
    return {reading: {name: e.to_list() for name, e in figures.items()} for reading, figures in readings.items()}


def transfer(calibration: Calibration, units: CellUnits) -> dict[str, Any]:
    """``calibration`` applied unchanged to every unit of another data set's cell."""
    settings = calibration.settings
    probability = calibration.probability(units.scores)
    readings = {settings.kind: probability_figures(probability, units, settings)}
    if calibration.threshold is not None:
        readings["flag"] = flag_figures(probability, units, calibration.threshold, settings)
    return {"units": len(units.scores), "records": len(set(units.records)), **_figures(readings)}


def calibrate_all(root: Path, settings: CalibrationSettings) -> dict[str, Any]:
    """Fit every cell's calibrations, write their files and return the summary."""
    from hallulab.calibration.fit import fit_calibration

    units = cell_units(root)
    fitted: dict[CellKey, Calibration] = {}
    rows: list[dict[str, Any]] = []
    for key, cell in units.items():
        row: dict[str, Any] = {
            "dataset": key.dataset,
            "method": key.method,
            "variant": key.variant,
            "level": cell.level,
        }
        try:
            calibration = fit_calibration(key.dataset, key.method, cell, settings)
        except CalibrationError as error:
            rows.append({**row, "not_calibrated": str(error)})
            continue
        fitted[key] = calibration
        write_calibration(calibration_path(root, key), calibration)
        stored = calibration.to_dict()
        rows.append(
            {
                **row,
                "split": stored["split"],
                "threshold": stored["threshold"],
                "heldout": stored["heldout"],
                "reliability": stored["reliability"],
            }
        )
    transfers = []
    for key, calibration in fitted.items():
        for other, cell in units.items():
            same = (other.method, other.variant) == (key.method, key.variant) and other.dataset != key.dataset
            if same and cell.level == calibration.level:
                transfers.append(
                    {
                        "method": key.method,
                        "variant": key.variant,
                        "level": calibration.level,
                        "from": key.dataset,
                        "to": other.dataset,
                        **transfer(calibration, cell),
                    }
                )
    return {
        "settings": {**settings.__dict__, "ece_bins": ECE_BINS},
        "calibrations": rows,
        "transfers": transfers,
        "command": "python -m hallulab.calibration",
    }


def _cell(estimate: list[float | None] | None, scale: float = 1.0, digits: int = 3) -> str:
    if not estimate or estimate[0] is None:
        return "–"
    point, low, high = float(estimate[0]), estimate[1], estimate[2]
    if low is None or high is None:
        return f"{point * scale:.{digits}f}"
    return f"{point * scale:.{digits}f} [{low * scale:.{digits}f}, {high * scale:.{digits}f}]"


#: the reliability diagrams' colours: the uncalibrated reading, the calibrated one
DIAGRAM_COLOURS = {"uncalibrated": "#9e9e9e", "calibrated": "#1565c0"}


def reliability_svg(points: dict[str, list[list[float]]], kind: str, title: tuple[str, str], size: int = 170) -> str:
    """One reliability diagram as inline SVG on one line: the diagonal (a calibrated reading's
    points lie on it), each reading's bins as dots at (mean probability, share hallucinated),
    the dot's area growing with its units."""
    pad = 14
    span = size - 2 * pad

    def xy(p: float, rate: float) -> tuple[float, float]:
        return pad + p * span, pad + (1 - rate) * span

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size + 26}" role="img" '
        f'aria-label="reliability diagram: {" ".join(title)}">',
        f'<rect x="{pad}" y="{pad}" width="{span}" height="{span}" fill="none" stroke="#ccc"/>',
        f'<line x1="{pad}" y1="{pad + span}" x2="{pad + span}" y2="{pad}" stroke="#ccc" stroke-dasharray="3 3"/>',
    ]
    most = max((n for reading in points.values() for _, _, n in reading), default=1)
    for reading, colour in (("uncalibrated", DIAGRAM_COLOURS["uncalibrated"]), (kind, DIAGRAM_COLOURS["calibrated"])):
        for p, rate, n in points.get(reading, []):
            x, y = xy(p, rate)
            radius = 1.5 + 4.5 * (n / most) ** 0.5
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius:.1f}" fill="{colour}" fill-opacity="0.75"/>')
    for line, text in enumerate(title):
        y = size + 8 + 11 * line
        parts.append(f'<text x="{size / 2:.0f}" y="{y}" font-size="10" text-anchor="middle">{text}</text>')
    parts.append("</svg>")
    return "".join(parts)


def render_page(summary: dict[str, Any]) -> str:
    """``docs/calibration.md`` from the summary (the page holds no number of its own)."""
    settings = summary["settings"]
    kind = settings["kind"]
    lines = [
        "# What a score means: calibrated probabilities and a threshold",
        "",
        "<!-- generated by python -m hallulab.calibration from results/calibration.json: do not edit -->",
        "",
        "A detector's score ranks units; it is no probability. For every cell of the",
        "[detector table](benchmark.md) this page fits a map from score to the probability that the",
        "unit is hallucinated, and chooses a threshold for a flag, on a development split of the",
        "cell's records, then measures both on the records held out. Every number below comes from",
        "`results/calibration.json`, which `python -m hallulab.calibration` writes from the committed",
        "labelled units of the cells (`results/benchmark/`); the calibrations themselves are",
        "`results/calibration/<data set>/<method>.<variant>.json`, which `hallulab score --calibration`",
        "and `detect(..., calibration=...)` apply. The models are the table's: the embedded",
        "SmolLM2-135M and the offline NLI model where a method calls one, so a calibration says how",
        "these scores on these data sets map to probabilities, not how a larger model's would.",
        "To calibrate on labelled data of your own: [Calibrate on your own labelled data](how-to/calibrate.md).",
        "",
        f"Settings: {settings['development_share']:.0%} of each cell's records (seed {settings['seed']}) for",
        "development, the rest held out; isotonic regression and Platt scaling (scikit-learn) fitted on",
        f"every development unit; the flag's threshold chosen on {settings['folds']}-fold cross-fitted",
        f"development probabilities of the {kind} map by the rule `{settings['rule']}`"
        + (f" (target precision {settings['target_precision']})" if settings["rule"] == "precision" else "")
        + f"; Brier score and ECE ({settings['ece_bins']} equal-width bins) with 95% bootstrap",
        f"intervals over held-out records ({settings['bootstrap_samples']} resamples). *Uncalibrated* reads",
        "the raw score min-max scaled over the development units as a probability: what using the",
        "score as one gives. Lower Brier and ECE are better. ECE grows on a resample (a bootstrap",
        "resample repeats records, which leaves bins emptier and their gaps noisier), so its interval",
        "can sit above its point.",
        "",
        "## On held-out records of the same data set",
        "",
        f"| Data set | Method | Variant | Level | Held-out units | Brier uncalibrated | Brier {kind} | Brier Platt |"
        f" ECE uncalibrated | ECE {kind} | Threshold | Precision | Recall | F1 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in summary["calibrations"]:
        if "not_calibrated" in row:
            continue
        held = row["heldout"]
        flag = held.get("flag", {})
        threshold = "–" if row["threshold"] is None else f"{row['threshold']:.3f}"
        lines.append(
            f"| {row['dataset']} | {row['method']} | `{row['variant']}` | {row['level']} | "
            f"{row['split']['heldout_units']} | {_cell(held['uncalibrated']['brier'])} | "
            f"{_cell(held[kind]['brier'])} | "
            f"{_cell(held['platt']['brier'])} | {_cell(held['uncalibrated']['ece'])} | {_cell(held[kind]['ece'])} | "
            f"{threshold} | {_cell(flag.get('precision'))} | {_cell(flag.get('recall'))} | {_cell(flag.get('f1'))} |"
        )
    lines += [
        "",
        "## Reliability on held-out records",
        "",
        "Each diagram puts every bin of held-out units at its mean probability (across) and its share",
        f"of hallucinated units (up): grey the uncalibrated reading, blue the {kind} one; a calibrated",
        "reading's dots lie on the dashed diagonal, and a dot's area grows with its units.",
        "",
        '<div class="reliability-diagrams">',
    ]
    for row in summary["calibrations"]:
        if "not_calibrated" not in row:
            title = (f"{row['dataset']}, {row['level']}", f"{row['method']} {row['variant']}")
            lines.append(reliability_svg(row["reliability"], kind, title))
    lines.append("</div>")
    skipped = [row for row in summary["calibrations"] if "not_calibrated" in row]
    if skipped:
        lines += ["", "Not calibrated:", ""]
        lines += [f"- {r['dataset']} {r['method']} `{r['variant']}`: {r['not_calibrated']}" for r in skipped]
    lines += [
        "",
        "## Carried to another data set",
        "",
        "A calibration fitted on one data set, applied unchanged to every unit of another data set",
        "where the same method's variant scores the same level: how far a probability and a threshold",
        "travel.",
        "",
        f"| Method | Variant | Level | Fitted on | Applied to | Units | Brier {kind} | ECE {kind} | Precision | Recall"
        " | F1 |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in summary["transfers"]:
        flag = row.get("flag", {})
        lines.append(
            f"| {row['method']} | `{row['variant']}` | {row['level']} | {row['from']} | {row['to']} | {row['units']} | "
            f"{_cell(row[kind]['brier'])} | {_cell(row[kind]['ece'])} | {_cell(flag.get('precision'))} | "
            f"{_cell(flag.get('recall'))} | {_cell(flag.get('f1'))} |"
        )
    if not summary["transfers"]:
        lines.append("| – | – | – | – | – | – | – | – | – | – | – |")
    return "\n".join(lines) + "\n"


def write_outputs(root: Path, summary: dict[str, Any]) -> None:
    with atomic_open(root / SUMMARY) as handle:
        handle.write(json.dumps(summary, indent=2) + "\n")
    with atomic_open(root / PAGE) as handle:
        handle.write(render_page(summary))
