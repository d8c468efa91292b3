"""DVC stage `generate`: main responses and N_max samples from the ``generator`` LLM role.

Passes records through when the data set already carries samples (generate.mode=auto or
keep; WikiBio keeps its GPT-3 samples) and says what it did. Writes the passages every
later stage reads, the white-box records of regenerated main responses, and a report.
``--shard I --shards S`` / ``--merge-shards S``: :mod:`hallulab.pipeline.sharding`.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from hallulab.core.call_cache import CallCache
from hallulab.core.io import write_json, write_jsonl
from hallulab.data.records import load_jsonl_records
from hallulab.generation import GenerateKnobs, generate_records
from hallulab.pipeline import paths, sharding
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.resources import Resources
from hallulab.pipeline.runner import run_stage, stage_logger, write_run_log
from hallulab.pipeline.stage_inputs import GENERATE_INPUTS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--params", default="params.yaml")
    sharding.add_arguments(parser)
    args = parser.parse_args()
    sharding.shard_of(args)  # a shard setting that names no shard stops here, before any input is read
    log = stage_logger("generate")
    view = ParamsView.load(args.params, GENERATE_INPUTS.param_keys(), "generate")
    cfg = view.typed(GenerateKnobs, "generate")
    records = load_jsonl_records(paths.prepared(args.dataset))
    started = time.perf_counter()
    with CallCache() as cache:
        resources = Resources(view, cache)
        try:
            llm = resources.llm("generator")
            result = sharding.run_sharded(
                args,
                "generate",
                args.dataset,
                cache,
                lambda: generate_records(records, llm, cfg, resources.spacy.sentences),
                log,
            )
        finally:
            resources.close()
        stats = cache.stats.as_dict()
    if result is None:  # a shard: its slice is its output
        return
    generated, mains, report = result
    write_jsonl(paths.records(args.dataset), (p.to_dict() for p in generated))
    write_jsonl(paths.main_tokens(args.dataset), mains)
    write_json(paths.generate_report(args.dataset), dataclasses.asdict(report))
    log.info("%s", report.summary(cfg))
    seconds = time.perf_counter() - started
    write_run_log("generate", args.dataset, {"seconds": seconds, "cache": stats})


if __name__ == "__main__":
    run_stage("generate", main)
