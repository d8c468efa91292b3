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
* a combining method (the ensemble) calls one when one of the members it combines does.

**The NLI model.** Every cell that reads an NLI model (:func:`hallulab.benchmark.nli_model.reads_nli`:
its method's steps or a required artifact read ``nli``; an ensemble with such a member) takes
``conf/benchmark.yaml``'s ``nli_settings`` after its method's own: the whole table reads one NLI
model, and each such cell names it (model and training recipe) in the table.

**A combining cell's members.** The ensemble's cell combines the candidates its data set's config
lists less those whose own cells are model-limited (:mod:`hallulab.benchmark.member_choice`),
judged from those cells' files when the combining cell's run is planned: its settings read the
members' verdicts, so a member cell that runs again (and is judged again) can change them. A
member cell keeps the units of the candidate variants the table does not show in its
member-units file (:attr:`CellRun.member_variants`), so that each is judged as the table judges
its rows. :func:`run_pending` runs the combining cells after the others, each planned again just
before it runs, and leaves one whose candidates are not all judged (or too few not
model-limited) not run, saying why.

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
from hallulab.benchmark.member_choice import MemberChoice, MemberFiles, choose
from hallulab.benchmark.nli_model import reads_nli
from hallulab.benchmark.units import binary_level, export_cell_units, read_units
from hallulab.core.config import CONF_DIR, ConfigError
from hallulab.core.io import read_json
from hallulab.core.needs import SAMPLES
from hallulab.pipeline import registry
from hallulab.pipeline.members import Member
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
    that calls an LLM runs on (a data set without an entry runs whole), method -> the
    settings that keep its cells to the variants the table shows (a method without an entry
    runs at its defaults), and the settings of the NLI model every NLI-bound cell reads (none:
    the configured default)."""

    llm_subsets: Mapping[str, tuple[str, ...]]
    method_settings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    nli_settings: tuple[str, ...] = ()

    @classmethod
    def load(cls, path: Path = SETTINGS_FILE) -> BenchmarkSettings:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return cls(
            _settings_by_name(raw, "llm_subsets", path),
            _settings_by_name(raw, "method_settings", path),
            _settings_list(raw.get("nli_settings") or [], f"{path}: nli_settings"),
        )


def _settings_list(value: Any, where: str) -> tuple[str, ...]:
    """A list of ``key=value`` settings; anything else is one line naming ``where``."""
    if not isinstance(value, list) or not all(isinstance(s, str) and "=" in s for s in value):
        raise ConfigError(f"{where}: expected a list of key=value settings, got {value!r}")
    return tuple(value)


def _settings_by_name(raw: Mapping[str, Any], section: str, path: Path) -> dict[str, tuple[str, ...]]:
    """One section of the settings file: a name -> its list of ``key=value`` settings."""
    entries = raw.get(section) or {}
    if not isinstance(entries, dict):
        raise ConfigError(f"{path}: {section}: expected a mapping of name -> settings")
    return {str(name): _settings_list(settings, f"{path}: {section}.{name}") for name, settings in entries.items()}


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
    members: Sequence[Member] | None = None,
) -> bool:
    """The rule of the module docstring: an LLM role of its own or of a required artifact,
    responses or samples the data set does not carry, or (a combining method) a member that
    calls one (``members``: those it combines; by default every candidate of the data set's config)."""
    if _roles_of(spec, artifacts) or not dataset.provision.responses_in_data:
        return True
    if SAMPLES in spec.needs and not dataset.provision.samples_in_data:
        return True
    if spec.combines is not None:
        members = dataset.combinations[spec.name].members if members is None else members
        return any(calls_an_llm(methods[m.method], dataset, methods, artifacts) for m in members)
    return False


def _shell_word(setting: str) -> str:
    """A setting as ``make result`` hands it to bash unquoted: braces (a member list's
    ``{method:...,variant:...}``) escaped, so that bash does not expand them."""
    return setting.replace("{", "\\{").replace("}", "\\}")


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
    #: the variants a combining cell of the column may combine that the table does not show: the
    #: cell keeps their units in its member-units file, so that each is judged as a row is
    member_variants: tuple[str, ...] = ()
    #: a combining cell: its candidates judged, and so the members it combines
    members: MemberChoice | None = None
    #: whether it reads an NLI model (:func:`hallulab.benchmark.nli_model.reads_nli`)
    reads_nli: bool = False
    #: the user's own settings, the last of :attr:`settings` (``make benchmark ARGS=...``)
    arguments: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{RESULT_PREFIX}{self.method}"

    @property
    def key(self) -> str:
        return f"{self.dataset}/{self.method}"

    @property
    def make_arguments(self) -> list[str]:
        """``make result``'s arguments for this cell (what :attr:`command` prints)."""
        args = " ".join(f"-S {_shell_word(setting)}" for setting in self.settings)
        return ["result", f"DATASET={self.dataset}", f"METHOD={self.method}", f"NAME={self.name}", f"ARGS={args}"]

    @property
    def command(self) -> str:
        args = " ".join(f"-S {_shell_word(setting)}" for setting in self.settings)
        return f'make result DATASET={self.dataset} METHOD={self.method} NAME={self.name} ARGS="{args}"'

    def results_file(self, root: Path = Path(".")) -> Path:
        return result_path(self.dataset, self.name, root)

    def units_file(self, root: Path = Path(".")) -> Path:
        """The labelled units of its variants (:mod:`hallulab.benchmark.units`)."""
        return root / CELLS_DIR / self.dataset / f"{self.method}.units.csv"

    def cost_file(self, root: Path = Path(".")) -> Path:
        """What its run cost, from its stages' logs (:mod:`hallulab.benchmark.cost`)."""
        return root / CELLS_DIR / self.dataset / f"{self.method}.cost.json"

    def member_units_file(self, root: Path = Path(".")) -> Path:
        """The labelled units of its :attr:`member_variants` (not the table's rows)."""
        return root / CELLS_DIR / self.dataset / f"{self.method}.member-units.csv"

    def member_files(self, root: Path = Path(".")) -> MemberFiles:
        """What judges a variant of this cell as a combining cell's member, in the checkout ``root``."""
        command = f"make benchmark CELL={self.key}"
        return MemberFiles(self.results_file(), (self.units_file(), self.member_units_file()), root, command)


def cell_runs(
    cells: Sequence[Cell],
    datasets: Sequence[BenchmarkDataset],
    settings: BenchmarkSettings,
    methods: Mapping[str, MethodSpec] | None = None,
    artifacts: Mapping[str, ArtifactSpec] | None = None,
    root: Path = Path("."),
) -> tuple[CellRun, ...]:
    """One run per applicable cell, in the cells' order (method by method); a combining cell's
    members are judged from the member cells' files under ``root``."""
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
    applicable = [cell for cell in cells if cell.applies]
    plain: dict[str, CellRun] = {}
    for cell in applicable:
        spec = methods[cell.method]
        if spec.combines is None:
            run = _plain_run(cell, spec, by_name[cell.dataset], settings, methods, artifacts)
            plain[run.key] = run
    found = dict(plain)
    for cell in applicable:
        spec = methods[cell.method]
        if spec.combines is not None:
            run = _combining_run(cell, spec, by_name[cell.dataset], settings, methods, artifacts, plain, root)
            found[run.key] = run
    return tuple(found[f"{cell.dataset}/{cell.method}"] for cell in applicable)


def _candidate_variants(method: str, dataset: BenchmarkDataset) -> tuple[str, ...]:
    """The variants of ``method`` that a combining method of the data set lists as candidates."""
    found = [m.variant for c in dataset.combinations.values() for m in c.members if m.method == method]
    return tuple(dict.fromkeys(found))


def _plain_run(
    cell: Cell,
    spec: MethodSpec,
    dataset: BenchmarkDataset,
    settings: BenchmarkSettings,
    methods: Mapping[str, MethodSpec],
    artifacts: Mapping[str, ArtifactSpec],
) -> CellRun:
    """A cell of a method that combines none: its subset, its own settings, the NLI settings
    where it reads an NLI model; the candidate variants the table does not show kept apart."""
    llm = calls_an_llm(spec, dataset, methods, artifacts)
    subset = settings.llm_subsets.get(cell.dataset, ()) if llm else ()
    nli = reads_nli(spec, artifacts)
    own = _method_settings([spec.name], settings) + (settings.nli_settings if nli else ())
    level = binary_level(cell.levels)
    variants = tuple(v for v in spec.benchmark_variants if spec.variant_scores_level(v, level))
    extra = tuple(v for v in _candidate_variants(spec.name, dataset) if v not in variants) if variants else ()
    return CellRun(cell.dataset, cell.method, subset + own, llm, cell.levels, variants, extra, reads_nli=nli)


def _combining_run(
    cell: Cell,
    spec: MethodSpec,
    dataset: BenchmarkDataset,
    settings: BenchmarkSettings,
    methods: Mapping[str, MethodSpec],
    artifacts: Mapping[str, ArtifactSpec],
    plain: Mapping[str, CellRun],
    root: Path,
) -> CellRun:
    """A combining cell: its candidates judged from their cells (:mod:`hallulab.benchmark.member_choice`),
    then the settings of the members it keeps: its subset where one of them calls an LLM, its own
    and their method settings (each once, in the members' order, so its run reads the outputs
    their cells wrote), the NLI settings where one reads an NLI model, and the narrowed member
    list where a candidate is left out."""
    assert spec.combines is not None
    candidates = dataset.combinations[spec.name].members
    files = {
        member.method: run.member_files(root)
        for member in candidates
        if (run := plain.get(f"{cell.dataset}/{member.method}")) is not None
    }
    checks = {member.method: methods[member.method].role_checks for member in candidates}
    choice = choose(spec.combines, candidates, files, checks)
    kept = choice.kept
    llm = calls_an_llm(spec, dataset, methods, artifacts, kept)
    subset = settings.llm_subsets.get(cell.dataset, ()) if llm else ()
    nli = reads_nli(spec, artifacts, methods, [member.method for member in kept])
    own = _method_settings([spec.name, *(member.method for member in kept)], settings)
    chosen = own + (settings.nli_settings if nli else ()) + choice.settings
    return CellRun(
        cell.dataset,
        cell.method,
        subset + chosen,
        llm,
        cell.levels,
        spec.benchmark_variants,
        members=choice,
        reads_nli=nli,
    )


def _method_settings(names: Sequence[str], settings: BenchmarkSettings) -> tuple[str, ...]:
    """The settings of these methods' entries, each once, in order (a combining method's own,
    then its members', so its run reads the outputs their cells wrote)."""
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
    return tuple(replace(run, settings=run.settings + extra, arguments=run.arguments + extra) for run in runs)


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
    """The variants the table shows for the cell that its units file does not hold, then the
    :attr:`~CellRun.member_variants` its member-units file does not hold."""
    missing: tuple[str, ...] = ()
    if run.variants:
        kept = read_units(run.units_file(root))
        missing = tuple(variant for variant in run.variants if variant not in kept)
    if run.member_variants:
        path = run.member_units_file(root)
        held = read_units(path) if path.is_file() else {}
        missing += tuple(variant for variant in run.member_variants if variant not in held)
    return missing


def pending(runs: Sequence[CellRun], root: Path = Path(".")) -> list[CellRun]:
    """The runs not done yet (:func:`is_done`): what :func:`run_pending` runs."""
    return [run for run in runs if not is_done(run, root)]


def _run_make(arguments: Sequence[str], root: Path) -> int:
    return subprocess.run(list(arguments), cwd=root, check=False).returncode


def export_units(run: CellRun, root: Path) -> int:
    """After the cell's run in the checkout ``root``: its variants' labelled units, and its
    member variants' in its member-units file; returns the rows written."""
    count = export_cell_units(run.dataset, run.method, run.levels, run.variants, run.units_file(root), root)
    if run.member_variants:
        count += export_cell_units(
            run.dataset, run.method, run.levels, run.member_variants, run.member_units_file(root), root
        )
    return count


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
        kept = (run.results_file(), run.units_file(), run.cost_file(), run.member_units_file())
        published = {path.as_posix() for path in kept}
        before = tracked_changes(root)
        with kept_as_found(root, RUN_FILES) as restored:
            with CellTimer() as timer:
                status = call([make, *run.make_arguments], root)
            if status == 0:
                export_units(run, root)
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
    plan: Callable[[CellRun], CellRun] | None = None,
) -> Outcome:
    """Run every cell without a results file (or the one ``only`` names, ``DATASET/METHOD``,
    whether or not it has one), in order, the combining cells last; a failing cell is reported
    and the next one runs, so one broken cell does not hold the rest of the table back.

    ``plan`` plans a combining cell again just before it runs (its members judged from the
    files the cells before it left); one that cannot run (a candidate not judged, too few
    members) is reported with its reason and counted as failed."""
    if only is not None and only not in {run.key for run in runs}:
        raise ConfigError(f"--cell {only}: not an applicable cell; applicable: {[run.key for run in runs]}")
    ordered = [run for run in runs if run.members is None] + [run for run in runs if run.members is not None]
    ran: list[str] = []
    failed: list[str] = []
    done: list[str] = []
    for run in ordered:
        if only is not None and run.key != only:
            continue
        if run.members is not None and plan is not None:
            run = plan(run)
        if only is None and is_done(run, root):
            done.append(run.key)
            continue
        blocked = run.members.blocked if run.members is not None else None
        if blocked is not None:
            print(f"benchmark: {run.key}: not run: {blocked}", flush=True)
            failed.append(run.key)
            continue
        (ran if execute(run) == 0 else failed).append(run.key)
    order = {run.key: index for index, run in enumerate(runs)}
    return Outcome(tuple(ran), tuple(sorted(done, key=order.__getitem__)), tuple(failed))
