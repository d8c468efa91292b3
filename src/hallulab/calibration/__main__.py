"""``python -m hallulab.calibration``: calibrate every committed benchmark cell and write the
calibration files, ``results/calibration.json`` and ``docs/calibration.md`` (:mod:`hallulab.calibration.table`);
``--check`` re-derives them and fails, naming the first file, when a committed one differs."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from hallulab.calibration.fit import RULES, CalibrationSettings
from hallulab.calibration.stored import CALIBRATIONS_DIR
from hallulab.calibration.table import PAGE, SUMMARY, calibrate_all, write_outputs
from hallulab.core.errors import UserFacingError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hallulab.calibration", description=__doc__)
    parser.add_argument("--root", type=Path, default=Path("."), help="the checkout (default: the current folder)")
    parser.add_argument("--rule", choices=RULES, default="best_f1", help="the threshold rule (default: best_f1)")
    parser.add_argument("--target-precision", type=float, default=0.8, help="the precision rule's target")
    parser.add_argument("--check", action="store_true", help="re-derive into a scratch folder and compare")
    args = parser.parse_args(argv)
    try:
        settings = CalibrationSettings(rule=args.rule, target_precision=args.target_precision)
        if not args.check:
            summary = calibrate_all(args.root, settings)
            write_outputs(args.root, summary)
            counts = f"{len(summary['calibrations'])} calibrations, {len(summary['transfers'])} transfers"
            print(f"{counts} -> {SUMMARY}, {PAGE}")
            return 0
        with tempfile.TemporaryDirectory() as scratch:
            copy = Path(scratch)
            source = args.root / "results" / "benchmark"
            for path in source.glob("*/*.units.csv"):
                target = copy / path.relative_to(args.root)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(path.read_bytes())
            write_outputs(copy, calibrate_all(copy, settings))
            made = [SUMMARY, PAGE, *(p.relative_to(copy) for p in sorted((copy / CALIBRATIONS_DIR).rglob("*.json")))]
            committed = [*(p.relative_to(args.root) for p in sorted((args.root / CALIBRATIONS_DIR).rglob("*.json")))]
            for relative in made:
                if (
                    not (args.root / relative).is_file()
                    or (args.root / relative).read_bytes() != (copy / relative).read_bytes()
                ):
                    print(f"{relative}: not what python -m hallulab.calibration writes", file=sys.stderr)
                    return 1
            stale = sorted(set(committed) - set(made))
            if stale:
                print(f"{stale[0]}: no committed cell makes it", file=sys.stderr)
                return 1
            return 0
    except UserFacingError as error:
        print(f"python -m hallulab.calibration: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
