"""The CPU probe's results file (benchmarks/cpu_reproducibility.json): its table is rendered
from it, and what the README says of it holds in it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.workspace import REPO

RESULTS = REPO / "benchmarks" / "cpu_reproducibility.json"


def _probe() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cpu_reproducibility", REPO / "benchmarks" / "cpu_reproducibility.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _recorded() -> dict[str, Any]:
    recorded: dict[str, Any] = json.loads(RESULTS.read_text())
    return recorded


def test_the_table_is_rendered_from_the_results_file() -> None:
    assert Path(RESULTS.with_suffix(".md")).read_text() == _probe().render_table(_recorded())


def test_the_recorded_machines_agree_in_every_setting_and_the_settings_differ() -> None:
    """The README's reading: every machine gives the reference's bits in the stages' setting,
    the machines agree in every other setting too, and thread count and kernels each change
    the bits."""
    probe = _probe()
    recorded = _recorded()
    machines = recorded["machines"]
    assert len(machines) >= 2 and len({m["torch"] for m in machines}) >= 2
    assert any("amx_tile" in m["vector_flags"] for m in machines)
    assert any("amx_tile" not in m["vector_flags"] for m in machines)
    for name in probe.SETTINGS:
        assert len({probe.combined_digest(m["settings"][name]) for m in machines}) == 1, name
    stage = machines[0]["settings"][probe.STAGE_SETTING]
    assert probe.stage_digests(stage) == recorded["reference"]
    combined = {name: probe.combined_digest(machines[0]["settings"][name]) for name in probe.SETTINGS}
    assert len(set(combined.values())) == len(combined)
