"""Every applicable detector on one labelled JSONL file: the column's cells, computed as the
benchmark table computes its own (``hallulab benchmark FILE -o DIR``).

For each registered method, in listing order, the applicability rule of the table
(:func:`hallulab.benchmark.applicability.cell`) decides from the records' provision
(:func:`hallulab.column.provision.records_provision`) whether it applies and at which levels. An
applicable method runs through :class:`hallulab.api.Detector` on the records (the steps the DAG
runs, with one call cache), with the settings the table's cells take for it
(``conf/benchmark.yaml``'s ``method_settings``) after the file's own composition
(``dataset=jsonl``, its name and path) and before the user's ``-S`` settings. Its cell is at the
finest binary level it is evaluated at (:func:`hallulab.benchmark.units.binary_level`), one row
per benchmark variant:

* the labelled units (:func:`hallulab.benchmark.units.cell_units`), written to
  ``units/<method>.units.csv`` so every number re-derives from the folder;
* ROC-AUC, PR-AUC and PRR with their record-resampled intervals
  (:func:`hallulab.benchmark.statistics.cell_statistics`);
* the paired difference against the length baseline's units at the same level
  (:func:`hallulab.benchmark.statistics.paired`);
* the verdict, valid or model-limited, from the units' flat share and the role checks the
  method declares, read from its diagnostics (:func:`hallulab.benchmark.validity.cell_verdict`);
* the cost: wall seconds and the model calls by request (computed, or served by the cache).

The combining method (the ensemble) runs last on the cells not model-limited: one member per
method (its first benchmark variant), at the finest level at least two such members share; its
cross-fitted logistic variant fits each fold on the other folds' labels only. A method can be
left out (``methods``: the ones to run); the length baseline always runs, since every verdict
is read against it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hallulab.api import Detector, DetectorRun, override_strings
from hallulab.benchmark.applicability import BenchmarkDataset, Cell, Combination, cell
from hallulab.benchmark.member_choice import MIN_MEMBERS, members_setting
from hallulab.benchmark.nli_model import reads_nli
from hallulab.benchmark.runs import BenchmarkSettings, calls_an_llm
from hallulab.benchmark.statistics import CellStatistics, Comparison, cell_statistics, paired
from hallulab.benchmark.units import BINARY_LEVELS, CellUnits, binary_level, cell_units
from hallulab.benchmark.validity import CellVerdict, cell_verdict
from hallulab.column.provision import ColumnInputError, records_provision
from hallulab.core.call_cache import CallCache
from hallulab.data.schema import Record
from hallulab.evaluation.protocol import ProtocolKnobs
from hallulab.pipeline import registry
from hallulab.pipeline.members import Member
from hallulab.pipeline.spec import MethodSpec

#: the loader a column's composition names (any JSONL file in the canonical schema)
LOADER = "jsonl"
#: the metric the cells are sorted and told apart by
RANKING_METRIC = "roc_auc"


@dataclass(frozen=True)
class ModelCalls:
    """One request kind's model calls in a cell's run: made, and computed (not served by the cache)."""

    request: str
    calls: int
    computed: int


@dataclass(frozen=True)
class ColumnCell:
    """One benchmark variant of one method on the file (a row of the column)."""

    method: str
    title: str
    variant: str
    units: CellUnits
    statistics: CellStatistics
    verdict: CellVerdict
    #: this variant minus the length baseline on the units both scored; None for the baseline itself
    versus_length: Comparison | None
    seconds: float
    calls: tuple[ModelCalls, ...]
    trivial_baseline: bool = False

    @property
    def name(self) -> str:
        return f"{self.method}/{self.variant}"

    @property
    def level(self) -> str:
        return self.units.level


@dataclass(frozen=True)
class NotApplicable:
    """A method that does not apply to the file, with the table's one-line reason."""

    method: str
    reason: str


@dataclass(frozen=True)
class Apart:
    """Two rows at one level whose paired interval of the ranking metric's difference excludes 0."""

    better: str
    worse: str
    difference: float


@dataclass(frozen=True)
class Column:
    """The whole column: its cells, the methods that do not apply, and the pairs told apart."""

    name: str
    records: int
    cells: tuple[ColumnCell, ...]
    not_applicable: tuple[NotApplicable, ...]
    apart: tuple[Apart, ...]
    #: the ensemble's members (``method/variant``), empty where it did not run
    members: tuple[str, ...] = ()
    #: why the ensemble did not run, where it did not
    ensemble_reason: str | None = None


def column_settings(path: Path, name: str) -> list[str]:
    """The file's composition: the ``jsonl`` data set config naming it."""
    return ["dataset=jsonl", f"dataset.name={name}", f"dataset.path={path.as_posix()}"]


def _calls(before: Mapping[str, tuple[int, int]], cache: CallCache) -> tuple[ModelCalls, ...]:
    found = []
    for request, cost in cache.stats.requests.items():
        calls, computed = before.get(request, (0, 0))
        if cost.calls - calls:
            found.append(ModelCalls(request, cost.calls - calls, cost.computed - computed))
    return tuple(found)


def _snapshot(cache: CallCache) -> dict[str, tuple[int, int]]:
    return {request: (cost.calls, cost.computed) for request, cost in cache.stats.requests.items()}


@dataclass(frozen=True)
class _Ran:
    spec: MethodSpec
    run: DetectorRun
    seconds: float
    calls: tuple[ModelCalls, ...]


class ColumnRunner:
    """Runs the methods of one file's column with one call cache (see the module docstring)."""

    def __init__(
        self,
        records: Sequence[Record],
        name: str,
        base_settings: Sequence[str],
        user_settings: Sequence[str],
        cache: CallCache,
        cfg: ProtocolKnobs | None = None,
        where: str | None = None,
    ) -> None:
        """``where``: the file's name in a refusal (the column's name by default)."""
        self.records = list(records)
        self.name = name
        self.base = list(base_settings)
        self.user = list(user_settings)
        self.cache = cache
        self.cfg = cfg or ProtocolKnobs()
        self.table_settings = BenchmarkSettings.load()
        self.provision = records_provision(self.records, where or name)

    def settings_for(self, methods: Sequence[str], extra: Sequence[str] = ()) -> list[str]:
        """The file's composition, the table's settings of ``methods``, then ``extra`` and the user's."""
        table = [s for m in methods for s in self.table_settings.method_settings.get(m, ())]
        return [*self.base, *table, *extra, *self.user]

    def dataset(self, combinations: Mapping[str, Combination] | None = None) -> BenchmarkDataset:
        return BenchmarkDataset(self.name, LOADER, self.provision, dict(combinations or {}))

    def run(self, spec: MethodSpec, settings: Sequence[str]) -> _Ran:
        before = _snapshot(self.cache)
        started = time.perf_counter()
        ran = Detector(spec.name, settings, dataset=self.name).run(self.records, self.cache, variants="all")
        return _Ran(spec, ran, time.perf_counter() - started, _calls(before, self.cache))

    def units_at(self, ran: _Ran, level: str, variants: Sequence[str]) -> dict[str, CellUnits]:
        return cell_units(ran.run.records, ran.run.scores, level, variants, self.cfg)

    def cells_of(self, ran: _Ran, found: Cell, baseline: Callable[[str], CellUnits | None]) -> list[ColumnCell]:
        """One row per benchmark variant of ``ran`` at the cell's finest binary level."""
        level = binary_level(found.levels)
        assert level is not None, f"{found.method}: no binary level among {found.levels}"
        spec = ran.spec
        written = list(dict.fromkeys(ran.run.scores["variant"]))
        variants = [v for v in spec.benchmark_variants if v in written] or [
            v for v in dict.fromkeys(ran.run.scores.loc[ran.run.scores["headline"], "variant"])
        ]
        rows = []
        for variant, units in self.units_at(ran, level, variants).items():
            reference = None if spec.trivial_baseline else baseline(level)
            rows.append(
                ColumnCell(
                    spec.name,
                    spec.title,
                    variant,
                    units,
                    cell_statistics(units, self.cfg),
                    cell_verdict(units, spec.role_checks, ran.run.diagnostics, f"{spec.name} on {self.name}"),
                    None if reference is None else paired(units, reference, self.cfg),
                    ran.seconds,
                    ran.calls,
                    spec.trivial_baseline,
                )
            )
        return rows


def _check_methods(chosen: Sequence[str] | None, methods: Mapping[str, MethodSpec]) -> None:
    unknown = [m for m in chosen or () if m not in methods]
    if unknown:
        raise ColumnInputError(f"--methods: {', '.join(unknown)}: no such method; the methods: {', '.join(methods)}")


def _calls_a_model(spec: MethodSpec, runner: ColumnRunner, registered: Mapping[str, MethodSpec]) -> bool:
    """Whether the method calls an LLM on these records or reads an NLI model (a combining
    method's members are the column's own rows, judged one by one)."""
    artifacts = registry.artifacts()
    dataset = runner.dataset({spec.name: Combination("response", ())} if spec.combines else None)
    return calls_an_llm(spec, dataset, registered, artifacts, members=()) or reads_nli(spec, artifacts)


def ensemble_members(cells: Sequence[ColumnCell]) -> tuple[str, tuple[Member, ...]] | None:
    """The finest level at which at least :data:`MIN_MEMBERS` methods have a valid row a
    combining method can read (one member per method, its first valid row, of a method that
    scores that level), with those members; None where no level has enough."""
    levels = [level for level in BINARY_LEVELS if any(c.level == level for c in cells)]
    for level in levels:
        members: dict[str, Member] = {}
        for found in cells:
            if found.level != level or found.trivial_baseline or found.verdict.limited or found.method in members:
                continue
            if level in registry.method(found.method).scored_levels:
                members[found.method] = Member(found.method, found.variant)
        if len(members) >= MIN_MEMBERS:
            return level, tuple(members.values())
    return None


def told_apart(cells: Sequence[ColumnCell], cfg: ProtocolKnobs) -> tuple[Apart, ...]:
    """Every pair of valid rows at one level whose paired interval of the ranking metric's
    difference excludes 0, the better one first."""
    valid = [c for c in cells if not c.verdict.limited]
    found = []
    for i, first in enumerate(valid):
        for second in valid[i + 1 :]:
            if first.level != second.level:
                continue
            comparison = paired(first.units, second.units, cfg)
            verdict = comparison.verdict(RANKING_METRIC)
            difference = comparison.differences[RANKING_METRIC].point
            if verdict == "better" and difference is not None:
                found.append(Apart(first.name, second.name, difference))
            elif verdict == "worse" and difference is not None:
                found.append(Apart(second.name, first.name, -difference))
    return tuple(found)


def run_column(
    path: Path,
    name: str | None = None,
    user_settings: Sequence[str] | Mapping[str, Any] = (),
    methods: Sequence[str] | None = None,
    cache: CallCache | None = None,
    progress: Callable[[str], None] = lambda line: None,
    no_llm: bool = False,
) -> Column:
    """The column of the labelled JSONL file ``path`` (named ``name``, its stem by default):
    the module docstring. ``methods``: the methods to run (every applicable one when None; the
    length baseline runs whatever the list); ``no_llm``: only those that call no LLM (for
    samples or responses the records lack, too) and read no NLI model, the detectors that run
    in seconds; ``progress`` gets a line before and after each method. The file is read and
    checked (:mod:`hallulab.column.provision`) before any model runs."""
    registered = registry.methods()
    _check_methods(methods, registered)
    name = name or path.stem
    owned = cache is None
    cache = CallCache() if cache is None else cache
    try:
        base, user = column_settings(path, name), override_strings(user_settings)
        baseline = next(spec.name for spec in registered.values() if spec.trivial_baseline)
        records = Detector(baseline, [*base, *user], dataset=name).records_of(path, cache)
        runner = ColumnRunner(records, name, base, user, cache, where=str(path))
        if no_llm:
            methods = [m for m in methods or registered if not _calls_a_model(registered[m], runner, registered)]
        return _run(runner, registered, methods, progress)
    finally:
        if owned:
            cache.close()


def _run(
    runner: ColumnRunner,
    registered: Mapping[str, MethodSpec],
    methods: Sequence[str] | None,
    progress: Callable[[str], None],
) -> Column:
    dataset = runner.dataset()
    plain = [s for s in registered.values() if s.combines is None]
    combining = [s for s in registered.values() if s.combines is not None]
    chosen = [s for s in plain if s.trivial_baseline or methods is None or s.name in methods]
    chosen.sort(key=lambda s: not s.trivial_baseline)  # the baseline first: every row is read against it
    cells_by_method = {s.name: cell(s, dataset, registered) for s in plain}
    not_applicable = [
        NotApplicable(name, found.reason) for name, found in cells_by_method.items() if found.reason is not None
    ]
    applicable = [(s, cells_by_method[s.name]) for s in chosen if cells_by_method[s.name].applies]
    if not any(s.trivial_baseline for s, _ in applicable):
        raise ColumnInputError(f"{runner.name}: the length baseline does not apply: no labels at a level it scores")
    total = len(applicable) + sum(1 for s in combining if methods is None or s.name in methods)
    baselines: dict[str, CellUnits] = {}
    baseline_run: _Ran | None = None

    def baseline(level: str) -> CellUnits | None:
        if level not in baselines and baseline_run is not None:
            variant = baseline_run.spec.benchmark_variants[0]
            baselines[level] = runner.units_at(baseline_run, level, [variant])[variant]
        return baselines.get(level)

    cells: list[ColumnCell] = []
    for index, (spec, found) in enumerate(applicable, start=1):
        progress(f"[{index}/{total}] {spec.name} ...")
        ran = runner.run(spec, runner.settings_for([spec.name]))
        if spec.trivial_baseline:
            baseline_run = ran
        cells += runner.cells_of(ran, found, baseline)
        progress(f"[{index}/{total}] {spec.name}: {ran.seconds:.1f} s")
    members: tuple[str, ...] = ()
    reason: str | None = None
    for offset, spec in enumerate(s for s in combining if methods is None or s.name in methods):
        index = len(applicable) + offset + 1
        chosen_members = ensemble_members(cells)
        if chosen_members is None:
            reason = f"fewer than {MIN_MEMBERS} methods have a cell that is not model-limited at one level"
            progress(f"[{index}/{total}] {spec.name}: not run: {reason}")
            continue
        level, listed = chosen_members
        assert spec.combines is not None
        section = spec.combines.rsplit(".", 1)[0]
        combination = Combination(level, listed)
        found = cell(spec, runner.dataset({spec.name: combination}), registered)
        if not found.applies:
            reason = found.reason
            progress(f"[{index}/{total}] {spec.name}: not run: {reason}")
            continue
        progress(f"[{index}/{total}] {spec.name} of {', '.join(m.key for m in listed)} ...")
        extra = [f"{section}.level={level}", members_setting(spec.combines, listed)]
        ran = runner.run(spec, runner.settings_for([m.method for m in listed] + [spec.name], extra))
        cells += runner.cells_of(ran, found, baseline)
        members = tuple(m.key for m in listed)
        progress(f"[{index}/{total}] {spec.name}: {ran.seconds:.1f} s")
    return Column(
        runner.name,
        len(runner.records),
        tuple(cells),
        tuple(not_applicable),
        told_apart(cells, runner.cfg),
        members,
        reason,
    )
