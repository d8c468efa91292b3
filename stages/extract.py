"""DVC stage `extract_<artifact>`: build one shared artifact for the data set.

python stages/extract.py --artifact NAME --dataset NAME [--params params.yaml]
    [--shard I --shards S | --merge-shards S]   (hallulab.pipeline.sharding)
"""

from __future__ import annotations

import argparse
import time

from hallulab.core.call_cache import CallCache
from hallulab.data.records import load_jsonl_records
from hallulab.pipeline import paths, registry, sharding
from hallulab.pipeline.executor import build_artifact
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.runner import read_artifacts, run_stage, stage_logger, write_artifact, write_run_log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--artifact", required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--params", default="params.yaml")
    sharding.add_arguments(parser)
    args = parser.parse_args()
    sharding.shard_of(args)  # a shard setting that names no shard stops here, before any input is read
    stage = f"extract_{args.artifact}"
    log = stage_logger(stage)
    spec = registry.artifact(args.artifact)
    view = ParamsView.load(args.params, spec.inputs.param_keys(), stage)
    records = load_jsonl_records(paths.records(args.dataset))
    inputs = read_artifacts(spec.requires, args.dataset)
    started = time.perf_counter()
    with CallCache() as cache:
        run = sharding.run_sharded(
            args,
            stage,
            args.dataset,
            cache,
            lambda: build_artifact(args.artifact, args.dataset, records, inputs, view, cache, log),
            log,
        )
        stats = cache.stats.as_dict()
    if run is None:  # a shard: its slice is its output
        return
    value = run.value
    write_artifact(value, paths.artifact(args.artifact, spec.suffix, args.dataset))
    seconds = time.perf_counter() - started
    log.info("%s: %d records in %.1fs; cache %s", args.artifact, len(records), seconds, stats)
    write_run_log(stage, args.dataset, {"seconds": seconds, "cache": stats, "records": len(records)})


if __name__ == "__main__":
    run_stage("extract", main)
