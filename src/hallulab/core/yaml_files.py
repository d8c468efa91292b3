"""YAML read as OmegaConf reads it, parsed by libyaml where PyYAML has it.

Every stage starts by reading ``params.yaml`` and the files under ``conf/`` (about 45 files,
for the check that refuses settings no file defines). ``OmegaConf.load`` and
``yaml.safe_load`` scan and parse in pure Python, a noticeable share of a cheap stage's
process and several times slower than libyaml (``benchmarks/bench_stage_start.py`` times both).
:data:`FastLoader` keeps OmegaConf's reading (its float rule, which
reads ``1e-4`` as a number; no timestamps; a duplicate key refused; ``pathlib`` tags) and
hands scanning, parsing and composing to libyaml (``yaml.cyaml.CParser``), as ``yaml.CSafeLoader``
does for the plain safe loader. The constructed values are those of the pure-Python loader:
the resolver and the constructors are the same Python objects, only the events come from C.
Where PyYAML was built without libyaml, the pure-Python loader is used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf._utils import get_yaml_loader

#: OmegaConf's loader class (resolvers, ``construct_mapping``, constructors): built once.
OMEGACONF_LOADER: Any = get_yaml_loader()


def _fast_loader() -> Any:
    if not getattr(yaml, "__with_libyaml__", False):
        return OMEGACONF_LOADER

    from yaml.cyaml import CParser

    class FastLoader(CParser, OMEGACONF_LOADER):
        """libyaml's parser under OmegaConf's constructor and resolver."""

        def __init__(self, stream: Any) -> None:
            CParser.__init__(self, stream)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)

    return FastLoader


FastLoader: Any = _fast_loader()


#: ``yaml.safe_load``'s loader, on libyaml where PyYAML has it.
SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(text: str) -> Any:
    """``text`` as OmegaConf's loader reads it (plain Python values)."""
    return yaml.load(text, Loader=FastLoader)


def safe_read(text: str) -> Any:
    """``yaml.safe_load(text)``, parsed by libyaml."""
    return yaml.load(text, Loader=SafeLoader)


def load_config(path: Path) -> DictConfig | ListConfig:
    """``OmegaConf.load(path)``, parsed by libyaml."""
    content = read_yaml(path.read_text(encoding="utf-8"))
    if content is not None and not isinstance(content, list | dict | str):
        raise OSError(f"{path}: a YAML file of configuration holds a {type(content).__name__}")
    return OmegaConf.create(content) if content is not None else OmegaConf.create()
