"""A published results file for the README-rendering tests: the provenance fields every file
carries, filled with placeholders, and the fields a test is about."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hallulab.results.published import RESULTS_DIR


def write_result(root: Path, dataset: str, name: str, method: str, **fields: Any) -> None:
    """``<root>/results/<dataset>/<name>.json`` with ``fields`` (metrics, intervals, ...)."""
    raw = {
        "name": name,
        "dataset": dataset,
        "method": method,
        "command": "make result",
        "git_revision": "0" * 40,
        "git_dirty": False,
        "overrides": [],
        "params": {},
        "models": [],
        "metrics": {},
        "intervals": {},
        "counts": {},
        **fields,
    }
    folder = root / RESULTS_DIR / dataset
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(raw), encoding="utf-8")
