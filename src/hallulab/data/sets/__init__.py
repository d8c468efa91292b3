"""The data-set registry: every kind of data set is one module here declaring ``SPEC``, a
:class:`~hallulab.data.sets.spec.DatasetSpec` (its loader, what its records provide, the data
source of its files), found by :func:`dataset_specs` as the methods' specs are found.

Everything that knows the data sets reads this registry: ``dataset.loader``'s check and the
loading (:func:`hallulab.data.loaders.load_dataset`), the benchmark table's columns
(:mod:`hallulab.benchmark.applicability`), the row labels that name who wrote a data set's
responses, and ``hallulab data list|fetch`` (:func:`dataset_sources`: which data source a
``conf/dataset`` config's files are in). The files themselves, with their sources, licences and
sha256, are data: ``hallulab/data/sources.yaml``. Adding a data set is a module here with its
loader and spec, a ``conf/dataset/<name>.yaml`` selecting it, and its files' entry in
``sources.yaml``; nothing else is edited by hand.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from pathlib import Path

import yaml

from hallulab.data.dataset_config import DatasetConfigError
from hallulab.data.sets.spec import DatasetSpec

__all__ = ["DatasetSpec", "dataset_sources", "dataset_spec", "dataset_specs"]

#: modules of this package that declare no data set
_NOT_SETS = ("spec",)


@functools.cache
def dataset_specs() -> dict[str, DatasetSpec]:
    """Every declared data set kind, by its loader name, in module name order."""
    found: dict[str, DatasetSpec] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name in _NOT_SETS:
            continue
        spec = importlib.import_module(f"{__name__}.{info.name}").SPEC
        if not isinstance(spec, DatasetSpec) or spec.loader != info.name:
            raise TypeError(f"{__name__}.{info.name}: SPEC must be a DatasetSpec whose loader is {info.name!r}")
        found[spec.loader] = spec
    return found


def dataset_spec(loader: str) -> DatasetSpec:
    """The spec of ``dataset.loader``; an unknown loader is one line naming the known ones."""
    specs = dataset_specs()
    if loader not in specs:
        raise DatasetConfigError(f"dataset.loader: {loader!r} is not one of {list(specs)}")
    return specs[loader]


def dataset_sources(conf_dir: Path | None = None) -> dict[str, str]:
    """The pipeline's data sets (``conf/dataset/<name>.yaml``) whose files are in a data source
    of another name (``nq_open`` -> ``sac3_qa_halu``): each config's loader's source, read from
    the config file as written."""
    from hallulab.core.config import CONF_DIR

    folder = (conf_dir or CONF_DIR) / "dataset"
    found = {}
    for path in sorted(folder.glob("*.yaml")):
        loader = ((yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("dataset") or {}).get("loader")
        source = dataset_specs()[loader].source if loader in dataset_specs() else None
        if source is not None and source != path.stem:
            found[path.stem] = source
    return found
