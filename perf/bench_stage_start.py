"""Benchmark: what a cheap DVC stage costs before it does its work.

Every stage process reads ``params.yaml`` and checks the knob sections it declares against
their classes' schemas (:func:`hallulab.pipeline.settings_schema.check_sections`). Prints that reading as the stages
do it (:mod:`hallulab.core.yaml_files`: ``params.yaml`` through the public ``OmegaConf.load``,
which parses in pure Python; ``conf/`` through ``yaml.safe_load``'s rules on libyaml) against a
reference that parses ``params.yaml`` with libyaml too (``yaml.CSafeLoader``, then
``OmegaConf.create``), in process, as a ratio: what the public loader costs per stage. The
stages do not use the reference: its float rule is YAML 1.1's, which reads ``1e-4`` as a
string where OmegaConf reads a number. Then the whole process of one cheap stage (SelfCheckGPT
n-gram's aggregation on the toy set: interpreter start, imports, parameters, its work), run in
a scratch copy of ``data/`` and ``params.yaml`` so the workspace is not touched; the median of
several runs. Ratios, not assertions. Usage:

    python perf/bench_stage_start.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from omegaconf import DictConfig, ListConfig, OmegaConf

from hallulab.core import config
from hallulab.pipeline.params import ParamsView
from hallulab.tooling.bench_record import BenchRow, record

REPO = Path(__file__).resolve().parents[1]
STAGE = ("stages/aggregate.py", "--method", "selfcheck_ngram", "--dataset", "toy")
DECLARED = ("selfcheck_ngram",)


def read_parameters(repeats: int) -> float:
    """Median seconds of one stage's parameter reading."""
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        ParamsView.load(str(REPO / "params.yaml"), DECLARED, "bench")
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def libyaml_reference(path: Path) -> DictConfig | ListConfig:
    """``path`` parsed by libyaml under YAML 1.1's rules, then made an OmegaConf config: the
    reference, not the stages' reading (``1e-4`` stays a string here)."""
    content = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    return OmegaConf.create(content) if content is not None else OmegaConf.create()


def with_libyaml_reference(repeats: int) -> float:
    """:func:`read_parameters` with ``params.yaml`` read by :func:`libyaml_reference`."""
    public = config.load_config
    config.load_config = libyaml_reference
    try:
        return read_parameters(repeats)
    finally:
        config.load_config = public


def stage_process(repeats: int) -> float:
    """Median wall seconds of the cheap stage's whole process, in a scratch copy."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        shutil.copytree(REPO / "data", root / "data")
        shutil.copy2(REPO / "params.yaml", root / "params.yaml")
        env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(REPO / "src")}
        command = [sys.executable, str(REPO / STAGE[0]), *STAGE[1:]]
        seconds = []
        for _ in range(repeats):
            started = time.perf_counter()
            subprocess.run(command, cwd=root, env=env, check=True, capture_output=True)
            seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    read_parameters(1)  # imports and first-use costs out of the timings
    public = read_parameters(args.repeats)
    reference = with_libyaml_reference(args.repeats) if yaml.__with_libyaml__ else None
    print(f"parameters + schema check, as the stages read (OmegaConf.load): {public * 1000:7.1f} ms")
    if reference is None:
        print("PyYAML has no libyaml here: no libyaml reference")
    else:
        print(
            f"the same, params.yaml parsed by libyaml (reference only):   {reference * 1000:7.1f} ms "
            f"(the public loader: {public / reference:.1f}x, {(public - reference) * 1000:+.1f} ms per stage)"
        )
    whole = stage_process(args.repeats)
    print(f"cheap stage, whole process ({' '.join(STAGE)}): {whole:.2f} s")
    rows = [
        BenchRow("params_omegaconf_load", "params.yaml + its schema check, as stages read it", public * 1000, "ms", 1.0)
    ]
    if reference is not None:
        label = "the same, params.yaml parsed by libyaml (a reference, not used: YAML 1.1's float rule)"
        rows.append(BenchRow("params_libyaml_reference", label, reference * 1000, "ms", round(public / reference, 2)))
    rows.append(BenchRow("cheap_stage", "a cheap stage's whole process (n-gram aggregation, toy)", whole, "s"))
    record(
        "stage_start",
        rows,
        {"repeats": args.repeats, "stage": " ".join(STAGE), "libyaml": bool(yaml.__with_libyaml__)},
    )


if __name__ == "__main__":
    main()
