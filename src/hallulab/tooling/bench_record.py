"""The benchmark report: every ``make bench`` script records its numbers in one file.

``perf/results.json`` holds one section per benchmark:

    {"ngram": {"command": "...", "setup": {...}, "machine": {...},
               "rows": [{"key": "reference", "label": "...", "value": 378.0, "unit": "s", "ratio": 1.0}, ...]}}

A row is one measurement: a value in its unit (seconds, or a rate such as pairs/s), and its
speed-up over the section's baseline row where the benchmark compares. The README's performance tables are rendered from
this file (``<!-- bench: SECTION -->``, :mod:`hallulab.report.result_tables`), so no timing there
is typed by hand. Timings depend on the machine: ``machine`` names its CPU count and the
torch threads the benchmark used; ratios taken side by side in one run are what carries.
"""

from __future__ import annotations

import os
import platform
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from hallulab.core.io import read_json, write_json

RESULTS = Path("perf") / "results.json"

T = TypeVar("T")


def timed(work: Callable[[], T]) -> tuple[T, float]:
    """What ``work()`` returns, and the wall-clock seconds it took (``time.perf_counter``)."""
    started = time.perf_counter()
    result = work()
    return result, time.perf_counter() - started


@dataclass(frozen=True)
class BenchRow:
    """One measurement: a value in ``unit`` and, where the section compares, its ratio."""

    key: str
    label: str
    value: float
    unit: str  # "s" (lower is better) or a rate such as "pairs/s" (higher is better)
    ratio: float | None = None  # speed-up over the section's baseline (baseline = 1.0)


def rate_rows(
    prefix: str, unit: str, units: int, seconds: dict[str, tuple[str, float]], digits: int = 2
) -> list[BenchRow]:
    """One row per named measurement of a side-by-side bench: ``units / seconds`` in ``unit``,
    its ratio to the first entry (the reference, ratio 1.0), keys ``<prefix>_<name>``.

    ``seconds`` maps a name to (label, seconds spent on the ``units``), reference first."""
    if not seconds:
        raise ValueError(f"{prefix}: no measurement to record")
    reference_rate = units / next(iter(seconds.values()))[1]
    rows = []
    for name, (label, spent) in seconds.items():
        rate = units / spent
        rows.append(BenchRow(f"{prefix}_{name}", label, round(rate, digits), unit, round(rate / reference_rate, 2)))
    return rows


def print_rows(rows: list[BenchRow]) -> None:
    """Each row on one line: key, value, unit, ratio and label (what ``make bench`` shows)."""
    key_width = max((len(row.key) for row in rows), default=0) + 2
    unit_width = max((len(row.unit) for row in rows), default=0) + 1
    for row in rows:
        ratio = "" if row.ratio is None else f"{row.ratio}x"
        print(f"{row.key:{key_width}s} {row.value:>12,} {row.unit:{unit_width}s} {ratio:>8s}  {row.label}")


#: The CPU flags that decide which reduced-precision path pays: bfloat16 matrix products run
#: in hardware with AMX (``amx_bf16``); with only ``avx512_bf16`` they are converted, and slower
#: than float32; int8 uses VNNI or AMX-INT8.
CPU_FEATURES = ("avx2", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16", "amx_int8")


def cpu_features(cpuinfo: Path = Path("/proc/cpuinfo")) -> list[str]:
    """Which of :data:`CPU_FEATURES` the CPU reports (Linux ``/proc/cpuinfo``; [] elsewhere)."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return []
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return [name for name in CPU_FEATURES if name in flags]


def accelerator() -> str | None:
    """The CUDA device's name where the bench imported torch and torch sees one, else None
    (torch is not imported for the question)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return None
    name: str = torch.cuda.get_device_name()
    return name


def machine(threads: int | None = None) -> dict[str, Any]:
    found = {
        "cpus": os.cpu_count(),
        "torch_threads": threads,
        "python": platform.python_version(),
        "processor": platform.machine(),
        "cpu_features": cpu_features(),
    }
    device = accelerator()
    return {**found, "accelerator": device} if device else found


def record(
    section: str,
    rows: list[BenchRow],
    setup: dict[str, Any],
    threads: int | None = None,
    path: Path = RESULTS,
) -> None:
    """Write (or replace) ``section`` in the results file; the other sections stay."""
    found: dict[str, Any] = read_json(path) if path.is_file() else {}
    found[section] = {
        "command": "python " + " ".join(shlex.quote(a) for a in sys.argv),
        "setup": setup,
        "machine": machine(threads),
        "rows": [asdict(row) for row in rows],
    }
    write_json(path, dict(sorted(found.items())))


def render_section(section: str, results: dict[str, Any]) -> str:
    """The README table of one section: measurement, value and, where a row has one, ratio
    (a section recorded without a reference has no ratio column)."""
    if section not in results:
        raise KeyError(f"perf/results.json has no section {section!r}: run make bench")
    body = results[section]
    with_ratio = any(row["ratio"] is not None for row in body["rows"])
    lines = (
        ["| measurement | value | ratio |", "|---|---|---|"] if with_ratio else ["| measurement | value |", "|---|---|"]
    )
    for row in body["rows"]:
        value = row["value"]
        shown = f"{value:.3g} {row['unit']}" if value < 10 else f"{value:,.1f} {row['unit']}"
        if not with_ratio:
            lines.append(f"| {row['label']} | {shown} |")
            continue
        ratio = "" if row["ratio"] is None else f"{row['ratio']:,.1f}x"
        lines.append(f"| {row['label']} | {shown} | {ratio} |")
    where = body["machine"]
    threads = f", {where['torch_threads']} torch threads" if where.get("torch_threads") else ""
    lines.append("")
    features = f" ({', '.join(where['cpu_features'])})" if where.get("cpu_features") else ""
    device = f" and one {where['accelerator']}" if where.get("accelerator") else ""
    lines.append(f"`{body['command']}` on {where['cpus']} CPUs{features}{device}{threads}.")
    return "\n".join(lines) + "\n"
