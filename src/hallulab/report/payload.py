"""The report page's data: one JSON document the page's script reads (no server, no fetch).

Shape (every list in the order the page shows it)::

    dataset, notes                      the run's data set and the summary's notes (models,
                                        profile, paper columns)
    summary  {columns, rows}            summary.csv as it is: every headline variant with
                                        its interval and the paper's value
    methods  [{name, title, variants: [{name, levels, units}]}]   ``units``: the key in ``units``
                                        of the units the variant scores
    records  [{id, prompt, response, sentences: [{text, label}], samples,
               response_label, prompt_label}]
    scores   {method: {variant: {level: {record: [[index, score, rank], ...]}}}}
    units    {units key: {level: {record: [{i, si, t, l, d}]}}}   (claim/fact/prompt only:
                                        sentences and responses are read off the records; the
                                        key is :meth:`UnitCatalogue.key`'s)
    curves   [{title, x, y, series: [{name, points, method, headline}]}]   the run's curves,
                                        then the held-out reliability diagram of each committed
                                        calibration of the run's methods on its data set; a
                                        series names its method, and ``headline`` marks those a
                                        chart opens with (the method's headline variants, else
                                        its first series)
    correction  the correction table the correct stage computed, or null
    absent   {summary, curves, correction}  what the page says where that part is empty

``rank`` is the unit's percentile among every unit the variant scored at that level in the
data set (0 = least, 1 = most likely hallucinated): scores of different methods live on
different scales, so the page colours by rank.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from hallulab.calibration.stored import HeldoutReliability
from hallulab.evaluation.summary import HEADLINES
from hallulab.evaluation.undefined import REASON_TEXT
from hallulab.report.inputs import ABSENT_IN_A_RUN, CURVE_FAMILIES, CurveFile, ReportInputs
from hallulab.report.units import UnitCatalogue

#: levels whose units are described in ``units`` (sentences and responses come from the records)
DESCRIBED_LEVELS = ("claim", "fact", "prompt")
#: most points a curve keeps (evenly spaced, the ends kept): a page stays a few MB on WikiBio
MAX_CURVE_POINTS = 200


@dataclass(frozen=True)
class CurveSeries:
    name: str
    points: list[tuple[float, float]]
    #: the method whose variant it draws ("" for none)
    method: str = ""
    #: drawn when its chart opens: a headline variant of its method (the others a click away)
    headline: bool = False


@dataclass(frozen=True)
class CurveGroup:
    """One chart: the series of one family and task or metric (one method's, or every method's)."""

    title: str
    x: str
    y: str
    series: list[CurveSeries]


def _number(value: Any) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    number = float(value)
    if math.isinf(number):
        return math.copysign(1e308, number)  # JSON has no infinity; the rank keeps the order
    return float(f"{number:.6g}")


def percentile_ranks(scores: pd.Series) -> np.ndarray:
    """Average rank of each score among the others, scaled to [0, 1] (one unit: 0.5)."""
    if len(scores) == 1:
        return np.array([0.5])
    ranks = scores.rank(method="average").to_numpy(dtype=np.float64)
    return (ranks - 1.0) / (len(scores) - 1.0)


def score_tree(frame: pd.DataFrame) -> dict[str, dict[str, dict[str, list[list[Any]]]]]:
    """variant -> level -> record -> [[unit index, score, rank], ...] (NaN scores left out)."""
    tree: dict[str, dict[str, dict[str, list[list[Any]]]]] = {}
    kept = frame[frame["score"].notna()]
    for (variant, level), rows in kept.groupby(["variant", "level"], sort=False):
        ranks = percentile_ranks(rows["score"])
        by_record = tree.setdefault(str(variant), {}).setdefault(str(level), {})
        for record, index, score, rank in zip(rows["record_id"], rows["unit_index"], rows["score"], ranks, strict=True):
            by_record.setdefault(str(record), []).append([int(index), _number(score), round(float(rank), 3)])
    return tree


def unit_tree(
    catalogue: UnitCatalogue, method: str, frame: pd.DataFrame
) -> dict[str, dict[str, dict[str, list[dict[str, Any]]]]]:
    """units key -> level -> record -> the units that method's rows name (claim/fact/prompt)."""
    out: dict[str, dict[str, dict[str, list[dict[str, Any]]]]] = {}
    described = frame[frame["level"].isin(DESCRIBED_LEVELS)]
    firsts = described.drop_duplicates(["variant", "level", "record_id", "unit_index"])
    for variant, level, record, index in zip(
        firsts["variant"], firsts["level"], firsts["record_id"], firsts["unit_index"], strict=True
    ):
        key = catalogue.key(method, str(variant))
        units = out.setdefault(key, {}).setdefault(str(level), {}).setdefault(str(record), [])
        if any(u["i"] == int(index) for u in units):
            continue
        unit = catalogue.unit(method, str(variant), str(level), str(record), int(index))
        units.append(
            {
                "i": unit.index,
                "si": unit.sentence_index,
                "t": unit.text,
                "l": unit.label,
                "d": [list(pair) for pair in unit.details],
            }
        )
    for levels in out.values():
        for records in levels.values():
            for units in records.values():
                units.sort(key=lambda u: u["i"])
    return out


def _thinned(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    if len(points) <= MAX_CURVE_POINTS:
        return points
    keep = np.unique(np.linspace(0, len(points) - 1, MAX_CURVE_POINTS).round().astype(int))
    return [points[i] for i in keep]


def curve_groups(curves: Sequence[CurveFile], headlines: Mapping[str, Sequence[str]] | None = None) -> list[CurveGroup]:
    """One chart per (family, task or metric) with every method on it, first (a series per
    method and variant, each method's headline series leading, so the chart opens with one
    line per method), then one chart per (family, method, task or metric), a series per
    variant. A series is a headline one when ``headlines`` names its variant for its method;
    a method none of whose series is named leads with its first."""
    per_method = method_curve_groups(curves, headlines or {})
    return [*all_methods_groups(per_method), *(group for _, group in per_method)]


def all_methods_groups(per_method: Sequence[tuple[str, CurveGroup]]) -> list[CurveGroup]:
    """The charts that put the methods of one (family, task or metric) side by side."""
    by_key: dict[tuple[str, str, str, str], list[tuple[str, CurveGroup]]] = {}
    for method, group in per_method:
        family, _, rest = group.title.partition(f": {method}, ")
        by_key.setdefault((family, rest, group.x, group.y), []).append((method, group))
    combined = []
    for (family, rest, x, y), members in by_key.items():
        if len({method for method, _ in members}) < 2:
            continue
        named = [(m, replace(s, name=f"{m}: {s.name}")) for m, g in members for s in g.series]
        leading = [s for _, s in named if s.headline]
        others = [s for _, s in named if not s.headline]
        combined.append(CurveGroup(f"{family}: all methods, {rest}", x, y, [*leading, *others]))
    return combined


def _with_headlines(method: str, series: list[CurveSeries], headlines: Sequence[str]) -> list[CurveSeries]:
    """``series`` of ``method``, those ``headlines`` names marked (none named: the first)."""
    named = {s.name for s in series} & set(headlines)
    return [replace(s, method=method, headline=s.name in named if named else i == 0) for i, s in enumerate(series)]


def method_curve_groups(
    curves: Sequence[CurveFile], headlines: Mapping[str, Sequence[str]] | None = None
) -> list[tuple[str, CurveGroup]]:
    """One chart per (family, method, task or metric), a series per variant."""
    titles = dict(CURVE_FAMILIES)
    groups: list[tuple[str, CurveGroup]] = []
    for curve in curves:
        frame = curve.frame
        if curve.family == "pr":
            group_by, series_by, x, y = "task", "variant", "recall", "precision"
        elif curve.family == "n_curve":
            group_by, series_by, x, y = "metric", "variant", "num_samples", "value"
        else:
            group_by, series_by, x, y = "metric", "series", "k", "value"
        if not {group_by, series_by, x, y} <= set(frame.columns):
            continue
        for group, rows in frame.groupby(group_by, sort=False):
            series = [
                CurveSeries(
                    str(name),
                    _thinned(
                        [
                            (float(a), float(b))
                            for a, b in zip(part[x], part[y], strict=True)
                            if math.isfinite(float(a)) and math.isfinite(float(b))
                        ]
                    ),
                )
                for name, part in rows.groupby(series_by, sort=False)
            ]
            series = _with_headlines(curve.method, series, (headlines or {}).get(curve.method, ()))
            title = f"{titles[curve.family]}: {curve.method}, {group}"
            groups.append((curve.method, CurveGroup(title, x, y if curve.family == "pr" else str(group), series)))
    return groups


def _ece_text(ece: tuple[float | None, float | None, float | None]) -> str:
    point, low, high = ece
    if point is None:
        return "ECE undefined"
    interval = f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else ""
    return f"ECE {point:.3f}{interval}"


def reliability_groups(calibrations: Sequence[HeldoutReliability]) -> list[CurveGroup]:
    """One reliability diagram per committed calibration, on its held-out records: the share of
    hallucinated units (y) against the mean probability (x) of each ECE bin, for the score read
    uncalibrated (min-max scaled over the development units) and calibrated, each series named
    with its ECE and 95% bootstrap interval; the diagonal is where a calibrated reading lies."""
    groups = []
    for found in calibrations:
        stored = found.calibration
        series = [CurveSeries("calibrated: the diagonal", [(0.0, 0.0), (1.0, 1.0)], stored.method, True)]
        for reading, label in (("uncalibrated", "uncalibrated (min-max scaled)"), (stored.kind, stored.kind)):
            points = [(p, rate) for p, rate, _ in found.bins[reading]]
            series.append(CurveSeries(f"{label}, {_ece_text(found.ece[reading])}", points, stored.method, True))
        title = (
            f"reliability: {stored.method}, {stored.variant} ({stored.level}), "
            f"{found.heldout_units} held-out units of {stored.dataset}, {found.ece_bins} bins"
        )
        groups.append(CurveGroup(title, "mean probability in the bin", "share hallucinated", series))
    return groups


def _summary(frame: pd.DataFrame | None, undefined: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """summary.csv's rows, and per row why each empty value or interval is empty (the reasons
    the evaluation wrote into ``.info.json``, in words)."""
    if frame is None:
        return {"columns": [], "rows": [], "reasons": []}
    columns = list(frame.columns)
    rows = [[_number(v) if isinstance(v, float) else v for v in row] for row in frame.itertuples(index=False)]
    reasons = [summary_reasons(dict(zip(columns, row, strict=True)), undefined) for row in rows]
    return {"columns": columns, "rows": rows, "reasons": reasons}


def summary_reasons(row: Mapping[str, Any], undefined: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """``{"value_1" | "ci_1" | "value_2" | "ci_2": reason}`` for a summary row's empty cells."""
    found: dict[str, str] = {}
    metrics = HEADLINES.get(str(row.get("level")), ())
    section = undefined.get(str(row.get("method")), {})
    for position, (key, _) in enumerate(metrics, start=1):
        value_reason = section.get("metrics", {}).get(str(row.get("variant")), {}).get(key)
        interval_reason = section.get("intervals", {}).get(str(row.get("variant")), {}).get(key)
        if _number(row.get(f"value_{position}")) is None and value_reason:
            found[f"value_{position}"] = REASON_TEXT.get(value_reason, value_reason)
        if _number(row.get(f"ci_{position}_low")) is None and (interval_reason or value_reason):
            reason = interval_reason or value_reason
            found[f"ci_{position}"] = REASON_TEXT.get(reason, reason)
    return found


def _method_entries(inputs: ReportInputs, catalogue: UnitCatalogue) -> list[dict[str, Any]]:
    entries = []
    for method, frame in inputs.scores.items():
        if frame.empty:
            continue
        variants = [
            {
                "name": str(v),
                "levels": sorted(set(frame.loc[frame["variant"] == v, "level"].astype(str))),
                "units": catalogue.key(method, str(v)),
            }
            for v in dict.fromkeys(frame["variant"])
        ]
        entries.append({"name": method, "title": inputs.method_titles.get(method, method), "variants": variants})
    order = list(inputs.method_titles)
    entries.sort(key=lambda e: order.index(e["name"]) if e["name"] in order else len(order))
    return entries


def _records(inputs: ReportInputs) -> list[dict[str, Any]]:
    return [
        {
            "id": p.id,
            "prompt": p.prompt,
            "response": p.response,
            "sentences": [
                {"text": s, "label": p.labels[i] if p.labels is not None and i < len(p.labels) else None}
                for i, s in enumerate(p.sentences)
            ],
            "samples": list(p.samples),
            "response_label": p.response_label,
            "prompt_label": p.prompt_label,
        }
        for p in inputs.records
    ]


def build_payload(inputs: ReportInputs, catalogue: UnitCatalogue) -> dict[str, Any]:
    """The page's JSON document (see the module docstring)."""
    units: dict[str, Any] = {}
    for method, frame in inputs.scores.items():
        for key, levels in unit_tree(catalogue, method, frame).items():
            units.setdefault(key, {}).update(levels)
    return {
        "dataset": inputs.dataset,
        "notes": list(inputs.notes),
        "summary": _summary(inputs.summary, inputs.undefined),
        "methods": _method_entries(inputs, catalogue),
        "records": _records(inputs),
        "scores": {method: score_tree(frame) for method, frame in inputs.scores.items() if not frame.empty},
        "units": units,
        "curves": [
            asdict(group)
            for group in [
                *curve_groups(inputs.curves, inputs.headline_variants),
                *reliability_groups(inputs.calibrations),
            ]
        ],
        "correction": dict(inputs.correction) if isinstance(inputs.correction, Mapping) else None,
        "absent": {**ABSENT_IN_A_RUN, **inputs.absent},
    }
