"""Reading the project's YAML files through the public APIs of OmegaConf and PyYAML.

Every stage starts by reading ``params.yaml`` and the files under ``conf/`` (for the check
that refuses settings no file defines). :func:`load_config` is ``OmegaConf.load``: OmegaConf's
own reading (its float rule, which reads ``1e-4`` as a number; no timestamps; a duplicate key
refused), parsed by PyYAML's pure-Python scanner, as OmegaConf offers no public way to hand the
parsing to libyaml. :func:`safe_read` is ``yaml.safe_load``'s reading, parsed by libyaml
(``yaml.CSafeLoader``) where PyYAML was built with it and by ``yaml.SafeLoader`` elsewhere.
``perf/bench_stage_start.py`` times what this reading costs a stage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from omegaconf import DictConfig, ListConfig, OmegaConf

#: ``yaml.safe_load``'s loader, on libyaml where PyYAML has it.
SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_read(text: str) -> Any:
    """``yaml.safe_load(text)``, parsed by libyaml where PyYAML has it."""
    return yaml.load(text, Loader=SafeLoader)


def load_config(path: Path) -> DictConfig | ListConfig:
    """``OmegaConf.load(path)``; a file whose top level is a scalar (a number, ``true``) is
    refused with an :class:`OSError` that names the file."""
    try:
        return OmegaConf.load(path)
    except OSError as error:
        if error.errno is not None:  # the file could not be opened or read: as the system said it
            raise
        raise OSError(f"{path}: a YAML file of configuration must hold a mapping or a list ({error})") from error
