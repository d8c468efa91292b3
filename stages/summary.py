"""DVC stage `summary`: one table of every method's headline metrics (100 columns wide).

Writes metrics/<dataset>/summary.md and summary.csv (:mod:`hallulab.evaluation.summary`) and
logs where; `make run` prints the table once, at the end.
"""

from __future__ import annotations

import argparse

from hallulab.core.io import atomic_open
from hallulab.evaluation.summary import SUMMARY_PARAMS, model_notes, summarise
from hallulab.pipeline import paths, registry
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.runner import run_stage, stage_logger


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--params", default="params.yaml")
    args = parser.parse_args()
    view = ParamsView.load(args.params, SUMMARY_PARAMS, "summary")
    specs = list(registry.methods().values())
    text, frame = summarise(specs, args.dataset, model_notes(view))
    with atomic_open(paths.summary(args.dataset, "md")) as handle:
        handle.write(text + "\n")
    with atomic_open(paths.summary(args.dataset, "csv")) as handle:
        frame.to_csv(handle, index=False, float_format="%.4f")
    stage_logger("summary").info("summary of %s written to %s", args.dataset, paths.summary(args.dataset, "md"))


if __name__ == "__main__":
    run_stage("summary", main)
