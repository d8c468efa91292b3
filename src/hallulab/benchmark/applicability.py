"""Which method applies to which data set, and at which levels: the benchmark table's cells.

A cell is read off two declarations and nothing typed by hand:

* the method's :class:`~hallulab.pipeline.spec.MethodSpec`: what it needs (``needs``, each
  with its one-line reason) and the levels it writes unit scores at (``level``, then
  ``other_levels``: SelfCheckGPT's passage score beside its sentence scores, CCP's sentences
  and responses beside its claims);
* the data set's spec's :class:`~hallulab.data.provision.Provision` (its loader's, in the
  registry :mod:`hallulab.data.sets`): the needs it meets and the levels it labels.

The rule, for a method ``m`` and a data set ``d``:

1. ``n/a`` with the reason of the first need of ``m`` (in its declared order) that ``d`` does
   not meet;
2. else ``m`` is evaluated at every level ``d`` labels among those ``m`` scores, and at the
   passage level where ``m`` scores sentences and ``d`` labels passages: the one aggregation
   the evaluation protocol itself performs (a passage's score is the variant's response score,
   or the mean of its sentence scores, and is correlated with the mean sentence label:
   SelfCheckGPT §7.2 and :func:`hallulab.evaluation.levels.passage_scores`);
3. no such level: ``n/a``, "no labels at the <levels it scores> level".

A combining method (``MethodSpec.combines``, the ensemble) scores the units of the level its
settings name (``<section>.level``) from the members its settings list (``<section>.members``),
both read from the data set's composed config (``conf/dataset/<name>.yaml`` sets them per data
set): it applies where each member applies and scores that level, and is evaluated at that level
(plus the passage level from sentences); otherwise ``n/a`` with the first member's reason.

The data sets are the configs under ``conf/dataset/`` whose loader's spec declares a provision,
or that declare one themselves (``dataset.provision``: a labelled JSONL file of one's own, which
``hallulab data add NAME FILE`` reads off its records; the ``jsonl`` loader's toy and ``jsonl``
configs hold whatever their file holds and declare none, so they are not benchmark columns;
``hallulab benchmark FILE`` makes a labelled file a column of its own without a checkout).
Adding a method or a data set config adds its row or column here with no
edit to this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hallulab.core.config import CONF_DIR, compose
from hallulab.data.dataset_config import dataset_settings
from hallulab.data.provision import Provision
from hallulab.data.sets import dataset_spec
from hallulab.pipeline import registry
from hallulab.pipeline.members import Member, check_level, parse_members
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.spec import MethodSpec


@dataclass(frozen=True)
class Combination:
    """A combining method's settings in one data set's config: the level it scores and its members."""

    level: str
    members: tuple[Member, ...]


@dataclass(frozen=True)
class BenchmarkDataset:
    """One column of the table: a data set config, its loader's provision, and the settings
    of each combining method in it."""

    name: str
    loader: str
    provision: Provision
    #: combining method -> its level and members as this data set's composed config sets them
    combinations: Mapping[str, Combination]


@dataclass(frozen=True)
class Cell:
    """One method on one data set: the levels it is evaluated at, or why it does not apply."""

    method: str
    dataset: str
    #: where it applies, the levels it is evaluated at (finest first); empty where it does not
    levels: tuple[str, ...] = ()
    #: where it does not apply, the one line the table shows; None where it does
    reason: str | None = None

    def __post_init__(self) -> None:
        if bool(self.levels) == (self.reason is not None):
            raise ValueError(f"{self.method} on {self.dataset}: a cell has levels or a reason, exactly one")

    @property
    def applies(self) -> bool:
        return self.reason is None


def _either(levels: Sequence[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return levels[0] if len(levels) == 1 else f"{', '.join(levels[:-1])} or {levels[-1]}"


def evaluated_levels(scored: Sequence[str], provision: Provision) -> tuple[str, ...]:
    """The levels the data set labels among those scored, with the passage level where
    sentences are scored (the protocol's own aggregation; module docstring, rule 2)."""
    reached = {*scored, *(("passage",) if "sentence" in scored else ())}
    return tuple(level for level in provision.labels if level in reached)


def _unmet(spec: MethodSpec, provision: Provision) -> str | None:
    """The reason of the method's first need the data set does not meet."""
    return next((need.reason for need in spec.needs if need not in provision.needs), None)


def cell(spec: MethodSpec, dataset: BenchmarkDataset, methods: Mapping[str, MethodSpec]) -> Cell:
    """The rule of the module docstring for one method and one data set (``methods``: every
    registered method, for a combining method's members)."""
    unmet = _unmet(spec, dataset.provision)
    if unmet is not None:
        return Cell(spec.name, dataset.name, reason=unmet)
    scored = spec.scored_levels
    if spec.combines is not None:
        combination = dataset.combinations[spec.name]
        for member in combination.members:
            found = cell(methods[member.method], dataset, methods)
            if found.reason is not None:
                return Cell(spec.name, dataset.name, reason=f"member {member.key}: {found.reason}")
            if combination.level not in methods[member.method].scored_levels:
                return Cell(spec.name, dataset.name, reason=f"member {member.key} scores no {combination.level} units")
        scored = (combination.level,)
    levels = evaluated_levels(scored, dataset.provision)
    if not levels:
        return Cell(spec.name, dataset.name, reason=f"no labels at the {_either(scored)} level")
    return Cell(spec.name, dataset.name, levels=levels)


def _combination(params: Mapping[str, object], spec: MethodSpec, where: str) -> Combination:
    """A combining method's level and members as a composed config sets them (the settings the
    API's combiner reads: ``<section>.level`` beside ``<section>.members``)."""
    assert spec.combines is not None
    section = spec.combines.rsplit(".", 1)[0]
    view = ParamsView(params, (spec.combines, f"{section}.level"), where)
    level = check_level(str(view.get(f"{section}.level")), f"{where}: {section}.level")
    members = parse_members(view.get(spec.combines), f"{where}: {spec.combines}", spec.name)
    return Combination(level, tuple(members))


def benchmark_datasets(
    methods: Mapping[str, MethodSpec] | None = None, conf_dir: Path = CONF_DIR
) -> tuple[BenchmarkDataset, ...]:
    """Every data set config under ``conf_dir/dataset`` whose loader or own config declares a
    provision, by file name, each composed as ``-S dataset=<name>`` selects it."""
    methods = registry.methods() if methods is None else methods
    found = []
    for path in sorted((conf_dir / "dataset").glob("*.yaml")):
        params = compose([f"dataset={path.stem}"], conf_dir)
        loader = str(params["dataset"]["loader"])
        provision = dataset_spec(loader).provision or dataset_settings(params["dataset"]).provision
        if provision is None:
            continue
        where = f"conf/dataset/{path.name}"
        combinations = {
            spec.name: _combination(params, spec, where) for spec in methods.values() if spec.combines is not None
        }
        found.append(BenchmarkDataset(path.stem, loader, provision, combinations))
    return tuple(found)


def applicability(
    methods: Mapping[str, MethodSpec] | None = None, datasets: Sequence[BenchmarkDataset] | None = None
) -> tuple[Cell, ...]:
    """Every method (the registry's, in listing order) on every benchmark data set: one cell
    each, method by method."""
    methods = registry.methods() if methods is None else methods
    datasets = benchmark_datasets(methods) if datasets is None else datasets
    return tuple(cell(spec, dataset, methods) for spec in methods.values() for dataset in datasets)
