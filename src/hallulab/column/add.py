"""``hallulab data add NAME FILE``: a labelled JSONL file of one's own as a data set of the
pipeline, and so a column of the benchmark table (``make benchmark DATASET=NAME``).

The command writes one declaration, ``conf/dataset/<NAME>.yaml`` in the checkout, and nothing
else:

* the ``jsonl`` data set config as its defaults (the loader, ``samples_held``: the samples
  ``generate`` draws with ``llms.generator`` for a record that carries none, the teacher-forcing
  prefix), with its name and the file's path (relative to the checkout when the file is inside
  it, so the config travels with a clone);
* ``dataset.provision``: what the records carry and the levels they label, read off them by the
  rules of :mod:`hallulab.column.provision` (the same a file's column from
  ``hallulab benchmark FILE`` reads), which is what makes the config a column of the table
  (:func:`hallulab.benchmark.applicability.benchmark_datasets`);
* the ensemble's candidate members, where the file labels a level that at least two of them
  score: the candidates the table's own columns list at the finest such level, kept where their
  method applies to the file (:func:`candidate_members`). ``make benchmark`` then judges each
  candidate by its own cell and combines the ones not model-limited, as in every column.

A file no column can be computed from is refused before anything is written, in one line
naming the file and what is missing (no labels, one class only, a record with neither samples
nor a prompt); an existing config of that name is never overwritten.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from hallulab.benchmark.applicability import BenchmarkDataset, benchmark_datasets, cell
from hallulab.benchmark.member_choice import MIN_MEMBERS
from hallulab.benchmark.units import BINARY_LEVELS
from hallulab.column.provision import ColumnInputError, records_provision
from hallulab.column.run import LOADER
from hallulab.data.provision import Provision
from hallulab.data.records import load_jsonl_records
from hallulab.pipeline import registry
from hallulab.pipeline.members import Member

#: a data set's name: a config file's stem and a results folder, so one plain word
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(frozen=True)
class AddedDataset:
    """What :func:`add_dataset` wrote: the config, the provision read off the records, and the
    ensemble's level and candidates (None and empty where no level has enough)."""

    name: str
    config: Path
    records: int
    provision: Provision
    ensemble_level: str | None
    members: tuple[Member, ...]


def candidate_members(
    provision: Provision, columns: Sequence[BenchmarkDataset]
) -> tuple[str, tuple[Member, ...]] | None:
    """The finest level the file labels at which the table's columns list at least
    :data:`MIN_MEMBERS` ensemble candidates whose method applies to the file and scores that
    level, with those candidates (each once, in the columns' order); None where no level has
    enough."""
    methods = registry.methods()
    own = BenchmarkDataset("own", LOADER, provision, {})
    # the levels units are labelled at one by one (not the passage's mean of its sentences)
    for level in (level for level in provision.labels if level in BINARY_LEVELS):
        found: dict[str, Member] = {}
        for column in columns:
            for combination in column.combinations.values():
                if combination.level != level:
                    continue
                for member in combination.members:
                    spec = methods[member.method]
                    if member.key in found or level not in spec.scored_levels:
                        continue
                    if cell(spec, own, methods).applies:
                        found[member.key] = member
        if len(found) >= MIN_MEMBERS:
            return level, tuple(found.values())
    return None


def _path_setting(file: Path, checkout: Path) -> str:
    resolved = file.resolve()
    if resolved.is_relative_to(checkout.resolve()):
        return resolved.relative_to(checkout.resolve()).as_posix()
    return resolved.as_posix()


def _config_text(name: str, path: str, provision: Provision, ensemble: tuple[str, tuple[Member, ...]] | None) -> str:
    dataset = {"name": name, "path": path, "provision": {**asdict(provision), "labels": list(provision.labels)}}
    lines = [
        "# @package _global_",
        f"# {name}: a labelled JSONL file of one's own, added by `hallulab data add {name} {path}`.",
        "# dataset.provision was read off its records (hallulab.column.provision); it makes this data set",
        f"# a column of the benchmark table: `make benchmark DATASET={name}` fills it.",
        "defaults:",
        f"  - {LOADER}",
        "  - _self_",
        "",
        yaml.safe_dump({"dataset": dataset}, sort_keys=False).rstrip(),
    ]
    if ensemble is not None:
        level, members = ensemble
        listed = {"level": level, "members": [{"method": m.method, "variant": m.variant} for m in members]}
        lines += [
            "",
            "# the ensemble's candidates: those the table's columns list at this level whose method applies here",
            yaml.safe_dump({"ensemble": listed}, sort_keys=False, default_flow_style=None).rstrip(),
        ]
    return "\n".join(lines) + "\n"


def add_dataset(name: str, file: Path, checkout: Path) -> AddedDataset:
    """Write ``conf/dataset/<name>.yaml`` in ``checkout`` for the labelled JSONL ``file`` (see
    the module docstring); every check runs before the file is written."""
    if not NAME_PATTERN.fullmatch(name):
        raise ColumnInputError(f"NAME {name!r}: a data set's name is lower-case letters, digits and _, a letter first")
    conf_dir = checkout / "conf"
    config = conf_dir / "dataset" / f"{name}.yaml"
    if config.exists():
        raise ColumnInputError(f"{config}: a data set of that name exists; pick another NAME or remove that file")
    if not file.is_file():
        raise ColumnInputError(f"{file}: no such file")
    records = load_jsonl_records(file)
    if not records:
        raise ColumnInputError(f"{file}: no records")
    provision = records_provision(records, str(file))
    ensemble = candidate_members(provision, benchmark_datasets(conf_dir=conf_dir))
    config.write_text(_config_text(name, _path_setting(file, checkout), provision, ensemble), encoding="utf-8")
    level, members = ensemble if ensemble is not None else (None, ())
    return AddedDataset(name, config, len(records), provision, level, members)
