"""The benchmark table as Markdown: one table per metric, rendered from the table file.

A filled cell shows the value and its 95% interval, ``78.8 [73.0, 84.6]``, from
``results/benchmark.json`` (:mod:`hallulab.benchmark.table_file`), with the marks

* **bold**: the best of its column (at its level) for that metric, among the cells not
  model-limited;
* ``≈``: not told apart from the best (the paired interval of the difference holds 0);
* ``†``: not above the trivial baseline (unit length): its paired difference against it is
  not above 0;
* ``‡``: model-limited (:mod:`hallulab.benchmark.validity`): the note under the tables gives
  the bounds and each such cell's reason (:func:`model_limited_note`);
* ``paper 92.5``: in the table of the metric a paper's number is set beside
  (:mod:`hallulab.benchmark.paper_numbers`), the published number of a paper that scored the
  same data set, level and positive class; *Beside the papers* (:func:`papers_note`) gives each
  such cell scored by the paper's own metric, the paper's model and what each side scored, then
  the papers' numbers the table cannot speak to and why;

and the level in parentheses where a column mixes levels. A cell that does not apply shows
``n/a`` with its reason, one that applies and has no results file ``not run yet``. Under the
tables, the NLI model and recipe of every NLI-bound cell (:func:`nli_table`) and each combining
cell's members (:func:`members_note`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hallulab.benchmark.paper_numbers import NOT_PAIRED
from hallulab.benchmark.statistics import METRIC_TITLES, METRICS
from hallulab.benchmark.table import TableRow
from hallulab.benchmark.validity import MODEL_LIMITED

NOT_RUN = "not run yet"
#: the mark of a model-limited cell
LIMITED_MARK = "‡"
LEGEND = (
    "**Bold**: the column's best at that level among the cells not model-limited; ≈: not told apart "
    "from the best (the paired 95% interval of the difference holds 0); †: not above the trivial length "
    "baseline (its paired difference against it is not above 0); ‡: model-limited (the note below says "
    "why). Hallucinated class positive; intervals resample records. *paper*: the number a paper published for"
    " the same data set, level and positive class, by its own metric (*Beside the papers*, below)."
)

COST_LEGEND = (
    "Seconds: the stage seconds of the method's own stages in the cell's run (their logs), plus, for "
    "calls the call cache served, the model seconds they took when an earlier run computed them (each "
    "request's recorded seconds in proportion to its cached calls); calls: the "
    "model calls those stages made (LLM, NLI and BERTScore requests, cached or not), each per 1,000 "
    "labelled units. The responses and samples every method of a data set reads are drawn once, by "
    "`generate`: its cost is the last row, per 1,000 records, from the cell whose run computed most "
    "of its calls, with the share the call cache served. *partial*: an own stage did not run in "
    "the cell's run (DVC found its outputs current), so its cost is not counted; where an earlier run "
    "had computed some of a cell's calls, the cell says what share the call cache served. A combining method "
    "(the ensemble) runs its members: its cell adds their cells' costs (each per 1,000 of its own "
    "units), *partial* where a member's cell is partial or not run yet. Each cell's cost file names the machine."
)


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def cell_text(entry: Mapping[str, Any] | None, metric: str, best: str | None, key: str, show_level: bool) -> str:
    """One filled cell's text for ``metric`` (``entry``: the row's entry in the table file)."""
    if entry is None:
        return "no units file"
    point, low, high = entry["metrics"][metric]
    if point is None:
        return "undefined"
    value = _number(point)
    text = f"**{value}**" if key == best else value
    if low is not None and high is not None:
        text += f" [{_number(low)}, {_number(high)}]"
    versus_best = entry["vs_best"].get(metric)
    if versus_best is not None and versus_best["verdict"] == "tied":
        text = "≈ " + text
    versus_baseline = entry["vs_baseline"].get(metric)
    if versus_baseline is not None and versus_baseline["verdict"] in ("tied", "worse"):
        text += " †"
    if entry.get("verdict") == MODEL_LIMITED:
        text += f" {LIMITED_MARK}"
    if show_level:
        text += f" ({entry['level']})"
    paper = entry.get("paper")
    if paper is not None and paper["beside"] == metric:
        text += f" · paper {_number(paper['value'])}"
    return text


def metric_table(rows: Sequence[TableRow], datasets: Sequence[str], table: Mapping[str, Any], metric: str) -> str:
    columns = table.get("columns", {})
    mixed = {
        dataset: len({entry["level"] for entry in columns.get(dataset, {}).get("rows", {}).values()}) > 1
        for dataset in datasets
    }
    lines = [
        "| Method | Variant | " + " | ".join(datasets) + " |",
        "|---|---|" + "---|" * len(datasets),
    ]
    for row in rows:
        key = f"{row.method}/{row.variant}"
        texts = []
        for dataset, cell in zip(datasets, row.cells, strict=True):
            if cell.reason is not None:
                texts.append(f"n/a: {cell.reason}")
            elif cell.result is None:
                texts.append(NOT_RUN)
            else:
                column = columns.get(dataset, {})
                entry = column.get("rows", {}).get(key)
                best = column.get("best", {}).get(entry["level"], {}).get(metric) if entry else None
                texts.append(cell_text(entry, metric, best, key, mixed[dataset]))
        lines.append(f"| {row.title} | `{row.variant}` | " + " | ".join(texts) + " |")
    random = []
    for dataset in datasets:
        levels = columns.get(dataset, {}).get("random", {})
        values = [f"{_number(found[metric])} ({level})" for level, found in levels.items()]
        random.append(", ".join(values) if values else "–")
    lines.append("| Random scorer (expected) | – | " + " | ".join(random) + " |")
    return "\n".join(lines) + "\n"


def model_limited_rule(table: Mapping[str, Any]) -> str:
    """The rule that makes a cell model-limited, with the bounds the table file states
    (``protocol.model_limited``, :mod:`hallulab.benchmark.validity`); empty for a table file
    that states none."""
    found = table.get("protocol", {}).get("model_limited")
    if not found:
        return ""
    flat, role = found["flat_share_at_least"], found["role_success_below"]
    return (
        f"A cell is model-limited when one score holds {flat:.0%} or more of its units, when a check of an"
        f" LLM role its method declares succeeded on less than {role:.0%} of the role's calls, or when a role"
        f" answering from a closed set (Yes or No, agreed or not) gave one answer to {flat:.0%} or more of"
        " them: its numbers are what the run computed, but they speak of the model that filled the role more"
        " than the method, so it is never a column's best (best among cells not model-limited)."
    )


def model_limited_cells(
    rows: Sequence[TableRow], datasets: Sequence[str], table: Mapping[str, Any]
) -> list[tuple[str, TableRow, str]]:
    """(data set, row, reason) of every model-limited cell, column by column in row order."""
    columns = table.get("columns", {})
    found = []
    for dataset in datasets:
        entries = columns.get(dataset, {}).get("rows", {})
        for row in rows:
            entry = entries.get(f"{row.method}/{row.variant}")
            if entry is not None and entry.get("verdict") == MODEL_LIMITED:
                found.append((dataset, row, str(entry["reason"])))
    return found


def model_limited_note(rows: Sequence[TableRow], datasets: Sequence[str], table: Mapping[str, Any]) -> str:
    """The note under the tables: the rule with its bounds, then each model-limited cell with
    its reason; empty where the table file states no bounds."""
    rule = model_limited_rule(table)
    if not rule:
        return ""
    cells = model_limited_cells(rows, datasets, table)
    listed = "".join(f"\n- {dataset}, {row.title} `{row.variant}`: {reason}" for dataset, row, reason in cells)
    return f"**Model-limited cells** ({LIMITED_MARK}). {rule}" + ("\n" + listed if listed else " None is.") + "\n"


def _roc_verdict(entry: Mapping[str, Any], against: str) -> str | None:
    """A cell's paired ROC-AUC verdict against its column's baseline or best (None: no pairing)."""
    found = entry.get(against, {}).get("roc_auc")
    return None if found is None else str(found["verdict"])


def column_verdicts(
    table: Mapping[str, Any], datasets: Sequence[str], titles: Mapping[str, str] | None = None
) -> dict[tuple[str, str], str]:
    """Per data set and level with a best cell, by ROC-AUC and the paired 95% intervals the
    table file holds, one sentence: the cells above the length baseline, and those not told
    apart from the column's best (cells not model-limited only, in the order of ``titles``, which
    names a ``method/variant`` key, then the table file's; a key without a title is shown as is)."""
    names = titles or {}
    order = {key: index for index, key in enumerate(names)}
    found = {}
    for dataset in datasets:
        column = table.get("columns", {}).get(dataset, {})
        entries = column.get("rows", {})
        for level, best in column.get("best", {}).items():
            key = best.get("roc_auc")
            if key is None:
                continue
            valid = sorted(
                (k for k, e in entries.items() if e["level"] == level and e.get("verdict") != MODEL_LIMITED),
                key=lambda k: order.get(k, len(order)),
            )
            above = [names.get(k, k) for k in valid if _roc_verdict(entries[k], "vs_baseline") == "better"]
            tied = [names.get(k, k) for k in valid if k != key and _roc_verdict(entries[k], "vs_best") == "tied"]
            found[dataset, level] = (
                f"above the length baseline: {', '.join(above) or 'none'}; not told apart"
                f" from the best ({names.get(key, key)}): {', '.join(tied) or 'none'}."
            )
    return found


def verdict_lines(rows: Sequence[TableRow], datasets: Sequence[str], table: Mapping[str, Any]) -> list[str]:
    """:func:`column_verdicts` as Markdown list items, the cells named by their rows' titles."""
    titles = {f"{row.method}/{row.variant}": f"{row.title} `{row.variant}`" for row in rows}
    return [
        f"- {dataset} ({level}): {sentence}"
        for (dataset, level), sentence in column_verdicts(table, datasets, titles).items()
    ]


def verdicts_note(rows: Sequence[TableRow], datasets: Sequence[str], table: Mapping[str, Any]) -> str:
    """What each column can tell apart (:func:`verdict_lines`), under a title; empty without cells."""
    lines = verdict_lines(rows, datasets, table)
    if not lines:
        return ""
    return (
        "**What each column tells apart** (ROC-AUC; a paired 95% interval of the difference that excludes 0,"
        " on the units both cells scored; cells not model-limited):\n\n" + "\n".join(lines) + "\n"
    )


def _units_text(paper: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
    """What each side scored: ``the same 1,908 sentences`` or ``344 sentences of 40 records
    (the paper: 1,908 of 238)``."""
    level = entry["level"]
    if paper["same_units"]:
        return f"the same {entry['units']:,} {level}s"
    return (
        f"{entry['units']:,} {level}s of {entry['records']:,} records"
        f" (the paper: {paper['paper_units']:,} of {paper['paper_records']:,})"
    )


def _models_text(models: Mapping[str, str]) -> str:
    return "; ".join(f"{role}: {name}" for role, name in models.items()) or "none"


#: the opening of :func:`papers_note`: what a pairing needs and why a paired cell is scored twice
PAPERS_RULE = (
    "A paper's number sits beside a cell only where the paper scored the same thing: the same data set (its"
    " responses and their labels), level, positive class and metric. The papers' WikiBio AUC-PR is the area under"
    " the precision-recall curve by the trapezoid rule, the table's PR-AUC is average precision, and the two part"
    " most for a flat score, so each such cell is also scored here by the paper's rule, on its own units, with its"
    " interval from the same resamples of its records. A cell that calls an LLM runs on a subset, so it scored"
    " fewer units than the paper (the last column), where the share of positives, and so a random scorer's"
    " AUC-PR, is not the paper's."
)


def paper_lines(rows: Sequence[TableRow], datasets: Sequence[str], table: Mapping[str, Any]) -> list[str]:
    """One Markdown table line per cell set beside a paper's number (:func:`papers_note`)."""
    columns = table.get("columns", {})
    lines = []
    for dataset in datasets:
        entries = columns.get(dataset, {}).get("rows", {})
        for row in rows:
            entry = entries.get(f"{row.method}/{row.variant}")
            paper = None if entry is None else entry.get("paper")
            if entry is None or paper is None:
                continue
            point, low, high = paper["cell"]
            cell = f"{_number(point)} [{_number(low)}, {_number(high)}]"
            if entry.get("verdict") == MODEL_LIMITED:
                cell += f" {LIMITED_MARK}"
            lines.append(
                f"| {dataset} | {row.title} `{row.variant}` | {paper['metric_title']} | {cell}"
                f" | {_number(paper['value'])} ({paper['paper']} {paper['where']})"
                f" | {paper['model']} | {_models_text(paper['cell_models'])} | {_units_text(paper, entry)} |"
            )
    return lines


def not_paired_lines() -> list[str]:
    """The papers' numbers no cell is set beside, each with its reason."""
    return [f"{found.paper} ({', '.join(found.datasets)}): {found.reason}." for found in NOT_PAIRED]


def papers_note(rows: Sequence[TableRow], datasets: Sequence[str], table: Mapping[str, Any]) -> str:
    """*Beside the papers*: every cell set beside a paper's number, scored by the paper's metric
    on its own units with its interval, the paper's number, model and source, the cell's models
    and what each side scored; then the papers' numbers that no cell is set beside, and why."""
    text = "**Beside the papers.** " + PAPERS_RULE
    lines = paper_lines(rows, datasets, table)
    if lines:
        header = [
            "| Data set | Method and variant | The paper's metric | This cell by it | The paper's number"
            " | The paper's model | This cell's models | Units scored |",
            "|---|---|---|---|---|---|---|---|",
        ]
        text += "\n\n" + "\n".join(header + lines)
    else:
        text += " No filled cell is set beside a paper's number yet."
    unpaired = "\n".join(f"- {line}" for line in not_paired_lines())
    return (
        text
        + "\n\n**What the papers cannot speak to.** No cell is set beside these published numbers:\n\n"
        + unpaired
        + "\n"
    )


def nli_text(found: Mapping[str, Any]) -> str:
    """``minilm_offline, recipe `swaps_wide`, sample first`` (a hub model: its id)."""
    order = str(found["pair_order"]).replace("_", " ")
    if found.get("recipe"):
        return f"{found['name']}, recipe `{found['recipe']}`, {order}"
    return f"{found['name']} (`{found['model']}`), {order}"


def nli_table(rows: Sequence[TableRow], datasets: Sequence[str], table: Mapping[str, Any]) -> str:
    """Every NLI-bound row: per column, the NLI model and recipe its filled cell read, from the
    table file's ``nli`` (:mod:`hallulab.benchmark.nli_model`); empty when no row reads one."""
    columns = table.get("columns", {})
    lines = []
    for row in rows:
        if not any(cell.reads_nli for cell in row.cells):
            continue
        texts = []
        for dataset, cell in zip(datasets, row.cells, strict=True):
            entry = columns.get(dataset, {}).get("rows", {}).get(f"{row.method}/{row.variant}")
            if cell.reason is not None:
                texts.append("n/a")
            elif not cell.reads_nli:
                texts.append("no NLI")
            elif entry is None or "nli" not in entry:
                texts.append(NOT_RUN if cell.result is None else "–")
            else:
                texts.append(nli_text(entry["nli"]))
        lines.append(f"| {row.title} | `{row.variant}` | " + " | ".join(texts) + " |")
    if not lines:
        return ""
    header = ["| Method | Variant | " + " | ".join(datasets) + " |", "|---|---|" + "---|" * len(datasets)]
    return (
        "**The NLI model of each NLI-bound cell** (its NLI config, the recipe the offline model was trained with,"
        " and the order a pair is read in), from each cell's own settings:\n\n" + "\n".join(header + lines) + "\n"
    )


def member_lines(rows: Sequence[TableRow], datasets: Sequence[str], table: Mapping[str, Any]) -> list[str]:
    """Per combining cell: the members its run combined, those its next run combines where they
    differ, each candidate left out with its reason and each not judged yet."""
    columns = table.get("columns", {})
    parts: dict[tuple[str, str], str] = {}
    for dataset in datasets:
        for row in rows:
            entry = columns.get(dataset, {}).get("rows", {}).get(f"{row.method}/{row.variant}")
            members = None if entry is None else entry.get("members")
            if members is None or (dataset, row.method) in parts:
                continue
            text = f"{dataset}, {row.title}: combined " + ", ".join(f"`{key}`" for key in members["combined"])
            if members["to_combine"] != members["combined"]:
                text += "; to run again with " + ", ".join(f"`{key}`" for key in members["to_combine"])
            for found in members["candidates"]:
                if found["verdict"] == MODEL_LIMITED:
                    text += f"; left out `{found['member']}` (model-limited: {found['reason']})"
                elif found["verdict"] is None:
                    text += f"; `{found['member']}` not judged yet ({found['reason']})"
            parts[dataset, row.method] = text
    return list(parts.values())


def members_note(rows: Sequence[TableRow], datasets: Sequence[str], table: Mapping[str, Any]) -> str:
    """Each combining cell's members (:func:`member_lines`); empty where there is none."""
    lines = member_lines(rows, datasets, table)
    if not lines:
        return ""
    return (
        "**A combining cell's members**: the candidates its data set's config lists, less those whose own cell is"
        " model-limited (judged as the table judges its rows):\n\n" + "\n".join(f"- {line}" for line in lines) + "\n"
    )


def cost_text(cost: Mapping[str, Any] | None) -> str:
    """A cell's cost per 1,000 units: seconds (its stages', and its cached calls' at their
    recorded seconds) and model calls, ``partial`` where some stage it needs did not run in its
    own run (its cost was paid earlier and is not counted), and the share of its calls the call
    cache served where there is one."""
    if cost is None:
        return "–"
    text = _seconds_and_calls(cost) + _notes(cost)
    members = cost.get("members")
    if members is None:
        return text
    return f"{text}; with its members' cells {_seconds_and_calls(members)}{_notes(members)}"


def cost_notes(complete: bool, cached_percent: float) -> list[str]:
    """What to know of a cost figure, worded alike wherever one is shown (the table, its shared
    ``generate`` row, ``hallulab plan``): ``partial`` for a cell whose run skipped a stage it
    needs (its cost was paid by an earlier run and is not in the figure), and the share of its
    calls the call cache served, which the figure counts at the seconds they took when computed."""
    notes = [] if complete else ["partial"]
    if cached_percent > 0:
        notes.append(f"{cached_percent:g}% of the calls from the call cache, at their recorded seconds")
    return notes


def _notes(cost: Mapping[str, Any]) -> str:
    """`` (partial; 2.8% of the calls from the call cache, at their recorded seconds)``, the part
    that applies, or nothing."""
    notes = cost_notes(bool(cost["complete"]), cost.get("cached_percent") or 0.0)
    return f" ({'; '.join(notes)})" if notes else ""


def _seconds_and_calls(cost: Mapping[str, Any]) -> str:
    return f"{cost['seconds']:,.1f} s, {cost['model_calls']:,.0f} calls"


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:,.1f} h"


def whole_table_text(total: Mapping[str, Any] | None) -> str:
    """The table file's ``total`` (:func:`hallulab.benchmark.table_file.whole_table`) as one
    paragraph: what the filled cells cost with an empty call cache, in hours, its parts, and what
    their runs took as they were made; a lower bound where a stage no cell's run made is named."""
    if not total or not total["cells"]:
        return ""
    cpus = " or ".join(str(count) for count in total["cpus"]) or "?"
    notes = ""
    if total["partial"]:
        notes = f"; {total['partial']} of them skipped a stage another cell's run had made, counted there"
    if total["uncounted"]:
        stages = ", ".join(f"`{name}`" for name in total["uncounted"])
        notes += f". A lower bound: no cell's run made {stages} (an earlier run outside the table did)"
    return (
        f"**The whole table**: its {total['cells']} filled cells (a method on a data set, however many"
        f" variants it shows) come to {_hours(total['seconds'])} with an empty call cache on"
        f" {cpus} CPUs: {_hours(total['stage_seconds'])} of the cells' own stages,"
        f" {_hours(total['cached_seconds'])} of calls the call cache served, at their recorded seconds,"
        f" and {_hours(total['generate_seconds'])} drawing each data set's responses and samples"
        f" (`generate`); their runs, as made, took {_hours(total['wall_seconds'])} of wall time{notes}."
    )


def shared_generation_text(found: Mapping[str, Any] | None) -> str:
    """The shared ``generate`` cost, saying what share of its calls the call cache served."""
    if found is None:
        return "–"
    return _seconds_and_calls(found) + _notes({"complete": True, **found})


def cost_table(rows: Sequence[TableRow], datasets: Sequence[str], table: Mapping[str, Any]) -> str:
    columns = table.get("columns", {})
    lines = ["| Method | Variant | " + " | ".join(datasets) + " |", "|---|---|" + "---|" * len(datasets)]
    for row in rows:
        key = f"{row.method}/{row.variant}"
        texts = []
        for dataset, cell in zip(datasets, row.cells, strict=True):
            entry = columns.get(dataset, {}).get("rows", {}).get(key)
            if cell.reason is not None:
                texts.append("n/a")
            elif entry is None:
                texts.append(NOT_RUN if cell.result is None else "–")
            else:
                texts.append(cost_text(entry.get("cost")))
        lines.append(f"| {row.title} | `{row.variant}` | " + " | ".join(texts) + " |")
    shared = []
    for dataset in datasets:
        found = columns.get(dataset, {}).get("generate")
        shared.append(shared_generation_text(found))
    lines.append("| Responses and samples (`generate`, per 1,000 records, shared) | – | " + " | ".join(shared) + " |")
    return "\n".join(lines) + "\n"


#: the settings that select a data set's subset start with this (``dataset.limit=100``)
SUBSET_PREFIX = "dataset."


def _settings_text(settings: Sequence[str]) -> str:
    return "`" + " ".join(f"-S {setting}" for setting in settings) + "`"


def runs_caption(rows: Sequence[TableRow], datasets: Sequence[str], table: Mapping[str, Any]) -> str:
    """What each column's cells scored and with which settings, read from the filled cells'
    results files (their ``-S`` settings) and the table file (their records): per column, the
    records of the cells run on the whole data set and of those run with ``dataset.*``
    settings (the subset they select); then each method whose cells ran with other settings
    (its ``method_settings`` and the table's ``ARGS``), each distinct list once."""
    columns = table.get("columns", {})
    parts = []
    for index, dataset in enumerate(datasets):
        by_subset: dict[tuple[str, ...], set[int]] = {}
        for row in rows:
            cell = row.cells[index]
            entry = columns.get(dataset, {}).get("rows", {}).get(f"{row.method}/{row.variant}")
            if cell.result is None or entry is None:
                continue
            subset = tuple(s for s in cell.result.overrides if s.startswith(SUBSET_PREFIX))
            by_subset.setdefault(subset, set()).add(int(entry["records"]))
        texts = []
        for subset, records in sorted(by_subset.items(), key=lambda item: (len(item[0]), item[0])):
            counts = " or ".join(f"{count:,}" for count in sorted(records))
            texts.append(f"{counts} records" + (f" ({_settings_text(subset)})" if subset else " (the whole set)"))
        if texts:
            parts.append(f"{dataset}: " + ", ".join(texts))
    text = "**Records per cell** (those with a labelled unit at its level): " + "; ".join(parts) + "." if parts else ""
    own: dict[str, list[tuple[str, ...]]] = {}
    for row in rows:
        for cell in row.cells:
            if cell.result is not None:
                settings = tuple(s for s in cell.result.overrides if not s.startswith(SUBSET_PREFIX))
                found = own.setdefault(row.title, [])
                if settings and settings not in found:
                    found.append(settings)
    listed = "; ".join(
        f"{title}: " + " or ".join(_settings_text(settings) for settings in found)
        for title, found in own.items()
        if found
    )
    if listed:
        text += (
            " **Other settings** (a method's entry of `conf/benchmark.yaml`'s `method_settings`, which keeps"
            f" its cells to the variants shown, then the `ARGS` the table was filled with): {listed}."
        )
    return text.strip()


def render(
    rows: Sequence[TableRow], datasets: Sequence[str], table: Mapping[str, Any], metrics: Sequence[str] = ()
) -> str:
    """Every metric's table (or those named), each under its title, then the legend; the full
    table (no metric named) also says what each column's cells scored, then their cost."""
    chosen = tuple(metrics) or tuple(METRICS)
    parts = []
    for metric in chosen:
        if metric not in METRICS:
            raise ValueError(f"benchmark marker: metric {metric!r}; expected one of {tuple(METRICS)}")
        parts.append(f"**{METRIC_TITLES[metric]}** (%)\n\n" + metric_table(rows, datasets, table, metric))
    text = "\n".join(parts) + "\n" + LEGEND + "\n"
    note = model_limited_note(rows, datasets, table)
    if note:
        text += "\n" + note
    if not metrics:
        for write in (verdicts_note, papers_note, nli_table, members_note):
            extra = write(rows, datasets, table)
            if extra:
                text += "\n" + extra
    caption = runs_caption(rows, datasets, table) if not metrics else ""
    if caption:
        text += "\n" + caption + "\n"
    if not metrics:
        text += (
            "\n**Cost** per 1,000 labelled units\n\n" + cost_table(rows, datasets, table) + "\n" + COST_LEGEND + "\n"
        )
        whole = whole_table_text(table.get("total"))
        if whole:
            text += "\n" + whole + "\n"
    return text


def best_table(rows: Sequence[TableRow], datasets: Sequence[str], table: Mapping[str, Any]) -> str:
    """The excerpt: per data set and level, the best filled cell by ROC-AUC among those not
    model-limited (``none`` where every cell at that level with a ROC-AUC is), the length
    baseline's, how many of the applicable cells are filled and how many of those are
    model-limited."""
    titles = {f"{row.method}/{row.variant}": f"{row.title} `{row.variant}`" for row in rows}
    lines = [
        "| Data set (level) | Best by ROC-AUC (among cells not model-limited) | Length baseline | Cells filled"
        " | Model-limited |",
        "|---|---|---|---|---|",
    ]
    for index, dataset in enumerate(datasets):
        applicable = [row for row in rows if row.cells[index].reason is None]
        column = table.get("columns", {}).get(dataset, {})
        entries = column.get("rows", {})
        limited = sum(entry.get("verdict") == MODEL_LIMITED for entry in entries.values())
        for level, best in column.get("best", {}).items():
            key = best.get("roc_auc")
            if key is not None:
                point, low, high = entries[key]["metrics"]["roc_auc"]
                shown = f"{titles.get(key, key)}: {_number(point)} [{_number(low)}, {_number(high)}]"
            elif any(e["level"] == level and e.get("verdict") == MODEL_LIMITED for e in entries.values()):
                shown = "none: every cell at this level is model-limited or undefined"
            else:
                continue
            length = "–"
            baseline = column.get("baseline", {}).get(level)
            if baseline is not None:
                b_point, b_low, b_high = entries[baseline]["metrics"]["roc_auc"]
                length = f"{_number(b_point)} [{_number(b_low)}, {_number(b_high)}]"
            lines.append(
                f"| {dataset} ({level}) | {shown} | {length} | {len(entries)} of {len(applicable)}"
                f" | {limited} of {len(entries)} |"
            )
    return "\n".join(lines) + "\n"
