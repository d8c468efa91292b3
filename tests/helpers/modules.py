"""Import a Python file that is not part of a package (a benchmark script, the docs' hooks)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_module(name: str, path: Path) -> ModuleType:
    """The module at ``path``, imported under ``name`` (and in ``sys.modules`` under it while it
    runs, as an import would put it: a dataclass defined in it looks its module up there)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
