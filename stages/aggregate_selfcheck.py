"""DVC stage `aggregate_selfcheck@<variant>`: a stored I x N_max matrix -> sentence and
passage scores, for NLI, BERTScore and Prompt alike.

Reads the sweep knobs only (selfcheck.num_samples / sample_selection / sample_aggregation /
seed); pure arithmetic, well under a second for WikiBio.
"""

from __future__ import annotations

import argparse
import time

from hallulab.config import load_params, section
from hallulab.io import read_json, write_json
from hallulab.logs import stage_logger
from hallulab.methods.sample_matrix import SampleMatrices, SampleSelection, aggregate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--matrices", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    log = stage_logger("aggregate_selfcheck")

    selection = SampleSelection.from_params(section(load_params(args.params), "selfcheck"))
    started = time.perf_counter()
    stored = SampleMatrices.from_dict(read_json(args.matrices))
    scores = aggregate(stored, selection)
    write_json(args.out, scores.to_dict(), indent=None)
    log.info(
        "%s: %d passages, N=%s (%s, %s) in %.2fs",
        stored.variant,
        len(stored.matrices),
        selection.num_samples or "all",
        selection.selection,
        selection.aggregation,
        time.perf_counter() - started,
    )


if __name__ == "__main__":
    main()
