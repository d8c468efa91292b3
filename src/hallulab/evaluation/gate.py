"""The CI metric gate: fail when a reported metric moves past its tolerance.

A baseline file (committed under ``tests/baselines/``) holds the metrics a run is expected
to reproduce and the tolerance, in the metrics' own unit (percentage points):

    {"tolerance": 0.01, "metrics": {variant: {metric: value}}}

Every metric in the baseline must be present in the run and within tolerance; a metric
that became NaN, or a variant that disappeared, fails too. A deliberate change updates the
baseline in the same commit (``python -m hallulab.evaluation.gate --update``).

CLI: ``python -m hallulab.evaluation.gate METRICS.json BASELINE.json [--update]``.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hallulab.core.io import read_json, write_json


@dataclass(frozen=True)
class Violation:
    variant: str
    metric: str
    baseline: float
    observed: float | None
    tolerance: float

    def __str__(self) -> str:
        if self.observed is None:
            return f"{self.variant}.{self.metric}: missing (baseline {self.baseline:.4f})"
        return (
            f"{self.variant}.{self.metric}: {self.observed:.4f} vs baseline {self.baseline:.4f} "
            f"(moved {self.observed - self.baseline:+.4f}, tolerance {self.tolerance})"
        )


def _defined(value: Any) -> float | None:
    """A metric value as a float, or None when it is missing or NaN."""
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def check(metrics: Mapping[str, Mapping[str, Any]], baseline: Mapping[str, Any]) -> list[Violation]:
    """All violations of ``baseline`` by ``metrics`` (empty list: the gate passes)."""
    tolerance = float(baseline["tolerance"])
    violations = []
    for variant, expected in baseline["metrics"].items():
        observed_variant = metrics.get(variant, {})
        for metric, value in expected.items():
            observed = _defined(observed_variant.get(metric))
            wanted = _defined(value)
            if wanted is None:  # undefined in the baseline (a correlation of constant scores): must stay so
                if observed is not None:
                    violations.append(Violation(variant, metric, math.nan, observed, tolerance))
            elif observed is None:
                violations.append(Violation(variant, metric, wanted, None, tolerance))
            elif abs(observed - wanted) > tolerance:
                violations.append(Violation(variant, metric, wanted, observed, tolerance))
    return violations


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("metrics")
    parser.add_argument("baseline")
    parser.add_argument("--update", action="store_true", help="rewrite the baseline from the metrics")
    parser.add_argument("--tolerance", type=float, default=None, help="with --update: the tolerance to store")
    args = parser.parse_args(argv)
    metrics = read_json(args.metrics)
    if args.update:
        previous = read_json(args.baseline) if args.tolerance is None else {"tolerance": args.tolerance}
        write_json(args.baseline, {"tolerance": previous["tolerance"], "metrics": metrics})
        print(f"baseline {args.baseline} updated from {args.metrics}")
        return 0
    violations = check(metrics, read_json(args.baseline))
    for violation in violations:
        print(f"METRIC GATE: {violation}", file=sys.stderr)
    if not violations:
        print(f"metric gate passed: {args.metrics} within tolerance of {args.baseline}")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
