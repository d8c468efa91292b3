"""DVC stage `score_<method>`: a method's expensive step (model calls; no sweep knob).

    python stages/score.py --method NAME --dataset NAME [--params params.yaml]
        [--shard I --shards S | --merge-shards S]

Reads the passages and the artifacts the method requires, runs ``hallulab.methods.<NAME>.score``
with the params the method declares (any other read fails), writes what it returns to
``data/scores/<dataset>/<method>.json``. A shard run writes only its slice of the model calls;
a merge adds the slices to the call cache first (:mod:`hallulab.pipeline.sharding`).
"""

from __future__ import annotations

import argparse
import time

from hallulab.core.call_cache import CallCache
from hallulab.core.io import write_json
from hallulab.data.records import load_jsonl_records
from hallulab.pipeline import paths, registry, sharding
from hallulab.pipeline.executor import score_inputs, score_method
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.runner import read_artifacts, run_stage, stage_logger, write_run_log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--method", required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--params", default="params.yaml")
    sharding.add_arguments(parser)
    args = parser.parse_args()
    sharding.shard_of(args)  # a shard setting that names no shard stops here, before any input is read
    stage = f"score_{args.method}"
    log = stage_logger(stage)
    spec = registry.method(args.method)
    view = ParamsView.load(args.params, score_inputs(spec).param_keys(), stage)
    records = load_jsonl_records(paths.records(args.dataset))
    artifacts = read_artifacts(spec.requires, args.dataset)
    started = time.perf_counter()
    with CallCache() as cache:
        run = sharding.run_sharded(
            args,
            stage,
            args.dataset,
            cache,
            lambda: score_method(spec, args.dataset, records, artifacts, view, cache, log),
            log,
        )
        stats = cache.stats.as_dict()
    if run is None:  # a shard: its slice is its output
        return
    stored = run.value.to_dict()
    write_json(paths.raw_scores(args.method, args.dataset), stored, indent=None)
    seconds = time.perf_counter() - started
    log.info("%s: %d records in %.1fs; cache %s (%s)", args.method, len(records), seconds, stats, cache.path)
    write_run_log(stage, args.dataset, {"seconds": seconds, "cache": stats, "records": len(records), **run.run_stats})


if __name__ == "__main__":
    run_stage("score", main)
