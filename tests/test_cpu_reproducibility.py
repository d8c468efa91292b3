"""The CPU probe's results file (perf/cpu_reproducibility.json): its table is rendered
from it, and what docs/explanation/reproducibility.md says of it holds in it."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.helpers.modules import load_module
from tests.workspace import REPO

RESULTS = REPO / "perf" / "cpu_reproducibility.json"


def _probe() -> ModuleType:
    return load_module("cpu_reproducibility", REPO / "perf" / "cpu_reproducibility.py")


def _recorded() -> dict[str, Any]:
    recorded: dict[str, Any] = json.loads(RESULTS.read_text())
    return recorded


def test_the_table_is_rendered_from_the_results_file() -> None:
    assert Path(RESULTS.with_suffix(".md")).read_text() == _probe().render_table(_recorded())


def test_machines_agree_within_a_cpu_family_and_not_across_vendors() -> None:
    """The reproducibility page's reading: the Intel AVX-512 machines (one with AMX, two torch builds) give
    the same bits in every setting, and on them thread count and kernels each change the
    bits; the AMD AVX2-only machine gives other bits than they do in every setting, strict
    AVX2 pinning included; the reference digests (what the committed outputs were made
    with) are those of a recorded machine."""
    probe = _probe()
    recorded = _recorded()
    machines = recorded["machines"]
    intel = [m for m in machines if m["vendor"] == "GenuineIntel" and "avx512f" in m["vector_flags"]]
    amd = [m for m in machines if m["vendor"] == "AuthenticAMD" and "avx512f" not in m["vector_flags"]]
    assert len(intel) >= 2 and len({m["torch"] for m in intel}) >= 2 and amd
    assert any("amx_tile" in m["vector_flags"] for m in intel)
    assert any("amx_tile" not in m["vector_flags"] for m in intel)
    for name in probe.SETTINGS:
        assert len({probe.combined_digest(m["settings"][name]) for m in intel}) == 1, name
        intel_bits = probe.combined_digest(intel[0]["settings"][name])
        assert all(probe.combined_digest(m["settings"][name]) != intel_bits for m in amd), name
    combined = {name: probe.combined_digest(intel[0]["settings"][name]) for name in probe.SETTINGS}
    assert len(set(combined.values())) == len(combined)
    stage_digests = [probe.stage_digests(m["settings"][probe.STAGE_SETTING]) for m in machines]
    assert recorded["reference"] in stage_digests
