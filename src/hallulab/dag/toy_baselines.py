"""The CI gate's toy baseline of a method that has none: ``tests/baselines/toy/<method>.json``
written from the method's toy metrics (``metrics/toy/<method>.json``, which ``make run``
writes) at the gate's default tolerance. An existing baseline is never rewritten here: moving a
gated number is ``python -m hallulab.evaluation.gate ... --update``, a deliberate act. Part of
``make regen``."""

from __future__ import annotations

import sys

from hallulab.core.config import REPO_ROOT
from hallulab.core.io import read_json, write_json
from hallulab.pipeline import registry

METRICS = REPO_ROOT / "metrics" / "toy"
BASELINES = REPO_ROOT / "tests" / "baselines" / "toy"
TOLERANCE = 0.01


def main() -> int:
    for name in registry.methods():
        baseline, metrics = BASELINES / f"{name}.json", METRICS / f"{name}.json"
        if baseline.is_file():
            continue
        if not metrics.is_file():
            print(f"{name}: no toy metrics yet; run `make run`, then `make regen` writes its toy baseline")
            continue
        write_json(baseline, {"tolerance": TOLERANCE, "metrics": read_json(metrics)})
        print(f"wrote {baseline.relative_to(REPO_ROOT)} from {metrics.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
