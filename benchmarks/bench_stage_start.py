"""Benchmark: what a cheap DVC stage costs before it does its work.

Every stage process reads ``params.yaml`` and checks the sections it declares against the
keys the files under ``conf/`` define (about 45 YAML files). Prints that reading with the
pure-Python YAML loaders (``OmegaConf.load``, ``yaml.safe_load``) against the same loaders'
rules parsed by libyaml (:mod:`hallulab.core.yaml_files`), in process, and the whole process
of one cheap stage (SelfCheckGPT n-gram's aggregation on the toy set: interpreter start,
imports, parameters, its work), run in a scratch copy of ``data/`` and ``params.yaml`` so the
workspace is not touched; the median of several runs. Ratios, not assertions. Usage:

    python benchmarks/bench_stage_start.py [--repeats 7]
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

from hallulab.bench_record import BenchRow, record
from hallulab.core import yaml_files
from hallulab.pipeline import known_keys
from hallulab.pipeline.params import ParamsView

REPO = Path(__file__).resolve().parents[1]
STAGE = ("stages/aggregate.py", "--method", "selfcheck_ngram", "--dataset", "toy")
DECLARED = ("selfcheck_ngram",)


def read_parameters(repeats: int) -> float:
    """Median seconds of one stage's parameter reading (the key tree's cache cleared)."""
    seconds = []
    for _ in range(repeats):
        known_keys.known_tree.cache_clear()
        started = time.perf_counter()
        ParamsView.load(str(REPO / "params.yaml"), DECLARED, "bench")
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def with_pure_python_loaders(repeats: int) -> float:
    fast, safe = yaml_files.FastLoader, yaml_files.SafeLoader
    yaml_files.FastLoader, yaml_files.SafeLoader = yaml_files.OMEGACONF_LOADER, yaml.SafeLoader
    try:
        return read_parameters(repeats)
    finally:
        yaml_files.FastLoader, yaml_files.SafeLoader = fast, safe


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
    pure = with_pure_python_loaders(args.repeats)
    fast = read_parameters(args.repeats)
    print(f"parameters + key check, pure-Python YAML: {pure * 1000:7.1f} ms")
    print(f"parameters + key check, libyaml:          {fast * 1000:7.1f} ms ({pure / fast:.1f}x)")
    whole = stage_process(args.repeats)
    print(f"cheap stage, whole process ({' '.join(STAGE)}): {whole:.2f} s")
    record(
        "stage_start",
        [
            BenchRow("params_pure_python", "params.yaml + conf/ key check, pure-Python YAML", pure * 1000, "ms", 1.0),
            BenchRow("params_libyaml", "the same, parsed by libyaml", fast * 1000, "ms", round(pure / fast, 2)),
            BenchRow("cheap_stage", "a cheap stage's whole process (n-gram aggregation, toy)", whole, "s"),
        ],
        {"repeats": args.repeats, "stage": " ".join(STAGE), "libyaml": bool(yaml.__with_libyaml__)},
    )


if __name__ == "__main__":
    main()
