"""How the benchmark table is filled: one published run per applicable cell, resumable.

Each cell that applies (:mod:`hallulab.benchmark.applicability`) is one method on one data set,
run and published like every result (``make result``, :mod:`hallulab.results`) under the name
``benchmark_<method>``: ``results/<data set>/benchmark_<method>.json``, with its command. The
runs share the DVC cache, its run-cache and the call cache, so a cell re-run after an
interruption restores what its stages and model calls already computed, and ``make benchmark``
skips every cell whose results file is there and was made with the cell's settings: an
interrupted table resumes at the first unfinished cell, and one cell re-runs alone with its own
command (``--cell DATASET/METHOD``, or the ``make result`` line in its file). ``ARGS="-S ..."``
adds the user's settings to every cell (other models: the table says which made each cell), and
a cell made with other settings counts as not done.

**Method settings.** A method's entry of ``conf/benchmark.yaml``'s ``method_settings`` holds the
``-S`` settings that keep its cells to the variants the table shows (HalluCheck's NER facts with
greedy regeneration and no cross-evaluation, FactSelfCheck's KG-LLM without its Text-LLM
reading): a cell then runs, and its cost column counts, what its headline reading needs. A
combining method's cell takes its members' settings too, so it reads their cells' outputs.

**Subsets.** A cell that calls an LLM runs on the subset its data set's entry of
``conf/benchmark.yaml`` selects (settings, so a bigger machine runs the whole set; the table's
caption prints them); a cell that calls none (black-box methods over the samples a data set
carries, the verifier outputs SAC3's sets carry, the length baseline) runs on the whole data
set. A cell calls an LLM when (:func:`calls_an_llm`):

* the method's score step, or an artifact it requires, names an LLM role (the ``generator``
  regenerating HalluCheck's answers, the ``proxy`` teacher-forcing the response for its
  token log-probabilities);
* or it needs samples and the data set carries none: ``generate`` draws them from the prompts;
* or the data set's records carry no response (Concept-7's prompts): ``generate`` writes it;
* a combining method (the ensemble) calls one when one of its members does.

:func:`cell_runs` lists the runs; :func:`run_pending` runs those without a results file.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from hallulab.benchmark.applicability import BenchmarkDataset, Cell
from hallulab.benchmark.cost import CellTimer, cell_cost, write_cell_cost
from hallulab.benchmark.units import export_cell_units, read_units
from hallulab.core.config import CONF_DIR, ConfigError
from hallulab.core.io import read_json
from hallulab.core.needs import SAMPLES
from hallulab.pipeline import registry
from hallulab.pipeline.spec import ArtifactSpec, MethodSpec
from hallulab.results.published import overrides_of, result_path
from hallulab.results.run_files import RUN_FILES, kept_as_found, restore_line, tracked_changes

#: the benchmark's settings (the subsets of the cells that call an LLM)
SETTINGS_FILE = CONF_DIR / "benchmark.yaml"
#: a cell's results name is this prefix and the method's name
RESULT_PREFIX = "benchmark_"
#: where a cell keeps its units and cost files: ``<data set>/<method>.units.csv`` and ``.cost.json``
CELLS_DIR = Path("results/benchmark")


@dataclass(frozen=True)
class BenchmarkSettings:
    """``conf/benchmark.yaml``: data set -> the ``-S`` settings that select the subset a cell
    that calls an LLM runs on (a data set without an entry runs whole), and method -> the
    settings that keep its cells to the variants the table shows (a method without an entry
    runs at its defaults)."""

    llm_subsets: Mapping[str, tuple[str, ...]]
    method_settings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path = SETTINGS_FILE) -> BenchmarkSettings:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return cls(_settings_by_name(raw, "llm_subsets", path), _settings_by_name(raw, "method_settings", path))


def _settings_by_name(raw: Mapping[str, Any], section: str, path: Path) -> dict[str, tuple[str, ...]]:
    """One section of the settings file: a name -> its list of ``key=value`` settings."""
    entries = raw.get(section) or {}
    if not isinstance(entries, dict):
        raise ConfigError(f"{path}: {section}: expected a mapping of name -> settings")
    found: dict[str, tuple[str, ...]] = {}
    for name, settings in entries.items():
        if not isinstance(settings, list) or not all(isinstance(s, str) and "=" in s for s in settings):
            raise ConfigError(f"{path}: {section}.{name}: expected a list of key=value settings, got {settings!r}")
        found[str(name)] = tuple(settings)
    return found


def _roles_of(spec: MethodSpec, artifacts: Mapping[str, ArtifactSpec]) -> tuple[str, ...]:
    """The LLM roles the method's score step and its required artifacts name."""
    roles = list(spec.score.llm_roles) if spec.score is not None else []
    for name in spec.requires:
        roles.extend(artifacts[name].inputs.llm_roles)
    return tuple(dict.fromkeys(roles))


def calls_an_llm(
    spec: MethodSpec,
    dataset: BenchmarkDataset,
    methods: Mapping[str, MethodSpec],
    artifacts: Mapping[str, ArtifactSpec],
) -> bool:
    """The rule of the module docstring: an LLM role of its own or of a required artifact,
    responses or samples the data set does not carry, or (a combining method) a member that
    calls one."""
    if _roles_of(spec, artifacts) or not dataset.provision.responses_in_data:
        return True
    if SAMPLES in spec.needs and not dataset.provision.samples_in_data:
        return True
    if spec.combines is not None:
        members = dataset.combinations[spec.name].members
        return any(calls_an_llm(methods[m.method], dataset, methods, artifacts) for m in members)
    return False


@dataclass(frozen=True)
class CellRun:
    """The published run that fills one applicable cell."""

    dataset: str
    method: str
    #: the ``-S`` settings of its subset, then its method's (and a combining method's members');
    #: empty: the whole data set at the method's defaults
    settings: tuple[str, ...]
    calls_llm: bool
    #: the levels it is evaluated at (finest first), and the variants the table shows
    #: (empty: every variant the method writes)
    levels: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{RESULT_PREFIX}{self.method}"

    @property
    def key(self) -> str:
        return f"{self.dataset}/{self.method}"

    @property
    def make_arguments(self) -> list[str]:
        """``make result``'s arguments for this cell (what :attr:`command` prints)."""
        args = " ".join(f"-S {setting}" for setting in self.settings)
        return ["result", f"DATASET={self.dataset}", f"METHOD={self.method}", f"NAME={self.name}", f"ARGS={args}"]

    @property
    def command(self) -> str:
        args = " ".join(f"-S {setting}" for setting in self.settings)
        return f'make result DATASET={self.dataset} METHOD={self.method} NAME={self.name} ARGS="{args}"'

    def results_file(self, root: Path = Path(".")) -> Path:
        return result_path(self.dataset, self.name, root)

    def units_file(self, root: Path = Path(".")) -> Path:
        """The labelled units of its variants (:mod:`hallulab.benchmark.units`)."""
        return root / CELLS_DIR / self.dataset / f"{self.method}.units.csv"

    def cost_file(self, root: Path = Path(".")) -> Path:
        """What its run cost, from its stages' logs (:mod:`hallulab.benchmark.cost`)."""
        return root / CELLS_DIR / self.dataset / f"{self.method}.cost.json"


def cell_runs(
    cells: Sequence[Cell],
    datasets: Sequence[BenchmarkDataset],
    settings: BenchmarkSettings,
    methods: Mapping[str, MethodSpec] | None = None,
    artifacts: Mapping[str, ArtifactSpec] | None = None,
) -> tuple[CellRun, ...]:
    """One run per applicable cell, in the cells' order (method by method)."""
    methods = registry.methods() if methods is None else methods
    artifacts = registry.artifacts() if artifacts is None else artifacts
    by_name = {dataset.name: dataset for dataset in datasets}
    unknown = sorted(set(settings.llm_subsets) - set(by_name))
    if unknown:
        raise ConfigError(
            f"{SETTINGS_FILE.name}: llm_subsets names data sets that are not benchmark columns: {unknown}"
        )
    unknown = sorted(set(settings.method_settings) - set(methods))
    if unknown:
        raise ConfigError(f"{SETTINGS_FILE.name}: method_settings names methods that are not registered: {unknown}")
    runs = []
    for cell in cells:
        if not cell.applies:
            continue
        dataset = by_name[cell.dataset]
        spec = methods[cell.method]
        llm = calls_an_llm(spec, dataset, methods, artifacts)
        subset = settings.llm_subsets.get(cell.dataset, ()) if llm else ()
        own = _method_settings(spec, dataset, settings)
        runs.append(CellRun(cell.dataset, cell.method, subset + own, llm, cell.levels, spec.benchmark_variants))
    return tuple(runs)


def _method_settings(spec: MethodSpec, dataset: BenchmarkDataset, settings: BenchmarkSettings) -> tuple[str, ...]:
    """The method's own settings; a combining method's members' settings too (each once, in
    the members' order), so its run reads the outputs their cells wrote."""
    names = [spec.name]
    if spec.combines is not None:
        names += [member.method for member in dataset.combinations[spec.name].members]
    found: list[str] = []
    for name in dict.fromkeys(names):
        found += [setting for setting in settings.method_settings.get(name, ()) if setting not in found]
    return tuple(found)


def with_arguments(runs: Sequence[CellRun], arguments: str) -> tuple[CellRun, ...]:
    """Every run with the user's own ``-S key=value`` settings after its subset's
    (``make benchmark ARGS="-S llm=... -S nli=..."``: the table re-filled with other models)."""
    words = shlex.split(arguments)
    extra = tuple(overrides_of(arguments))
    if len(words) != 2 * len(extra):
        raise ConfigError(f"benchmark ARGS {arguments!r}: expected -S key=value settings only")
    return tuple(replace(run, settings=run.settings + extra) for run in runs)


def is_done(run: CellRun, root: Path = Path(".")) -> bool:
    """Its results file and its units file are there, the results were made with its settings
    (a table re-filled with other settings runs the cell again), and the units file holds every
    variant the table shows (a variant added to the table after the cell ran runs it again)."""
    path = run.results_file(root)
    if not path.is_file() or not run.units_file(root).is_file():
        return False
    made_with = read_json(path).get("overrides", [])
    return list(made_with) == list(run.settings) and not missing_variants(run, root)


def missing_variants(run: CellRun, root: Path = Path(".")) -> tuple[str, ...]:
    """The variants the table shows for the cell that its units file does not hold."""
    if not run.variants:
        return ()
    kept = read_units(run.units_file(root))
    return tuple(variant for variant in run.variants if variant not in kept)


def pending(runs: Sequence[CellRun], root: Path = Path(".")) -> list[CellRun]:
    """The runs not done yet (:func:`is_done`): what :func:`run_pending` runs."""
    return [run for run in runs if not is_done(run, root)]


def _run_make(arguments: Sequence[str], root: Path) -> int:
    return subprocess.run(list(arguments), cwd=root, check=False).returncode


def make_runner(
    root: Path, make: str = "make", call: Callable[[Sequence[str], Path], int] = _run_make
) -> Callable[[CellRun], int]:
    """Runs one cell as its command says, in the checkout ``root`` (``call`` runs the ``make``
    command line there and returns its exit status), then keeps its labelled units and its cost
    (:data:`CELLS_DIR`); returns the exit status.

    The run rewrites ``params.yaml`` and ``dvc.lock`` (the cell's settings and stages; its units
    are read under them): both are put back as they were before the cell when it ends, failed or
    interrupted too (:func:`hallulab.results.run_files.kept_as_found`). Another tracked file the
    run changed that the cell does not publish is named in one line with its restore command."""

    def execute(run: CellRun) -> int:
        published = {path.as_posix() for path in (run.results_file(), run.units_file(), run.cost_file())}
        before = tracked_changes(root)
        with kept_as_found(root, RUN_FILES) as restored:
            with CellTimer() as timer:
                status = call([make, *run.make_arguments], root)
            if status == 0:
                export_cell_units(run.dataset, run.method, run.levels, run.variants, run.units_file(root), root)
                cost = cell_cost(run.method, run.dataset, timer.started, timer.seconds, root)
                write_cell_cost(run.cost_file(root), cost)
        if restored:
            print(f"benchmark: {run.key}: {', '.join(restored)} put back as they were before the cell", flush=True)
        changed = sorted(tracked_changes(root) - before - published - set(RUN_FILES))
        if changed:
            print(f"benchmark: {run.key}: " + restore_line(changed, "changed by the cell's run, not published"))
        return status

    return execute


@dataclass(frozen=True)
class Outcome:
    """What :func:`run_pending` did: the cells it ran, those already done, those that failed."""

    ran: tuple[str, ...]
    done_before: tuple[str, ...]
    failed: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"ran": list(self.ran), "done_before": list(self.done_before), "failed": list(self.failed)}


def run_pending(
    runs: Sequence[CellRun],
    execute: Callable[[CellRun], int],
    root: Path = Path("."),
    only: str | None = None,
) -> Outcome:
    """Run every cell without a results file (or the one ``only`` names, ``DATASET/METHOD``,
    whether or not it has one), in order; a failing cell is reported and the next one runs,
    so one broken cell does not hold the rest of the table back."""
    if only is not None:
        chosen = [run for run in runs if run.key == only]
        if not chosen:
            raise ConfigError(f"--cell {only}: not an applicable cell; applicable: {[run.key for run in runs]}")
        todo, done = chosen, []
    else:
        todo = pending(runs, root)
        done = [run for run in runs if run not in todo]
    ran: list[str] = []
    failed: list[str] = []
    for run in todo:
        (ran if execute(run) == 0 else failed).append(run.key)
    return Outcome(tuple(ran), tuple(run.key for run in done), tuple(failed))
