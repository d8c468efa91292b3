"""DVC stage `prepare`: source data set -> canonical passages (JSONL) + provenance."""

from __future__ import annotations

import argparse

from hallulab.config import load_params
from hallulab.data.loaders import load_dataset
from hallulab.io import write_json, write_jsonl
from hallulab.pipeline import paths
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.runner import run_stage, stage_logger


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--params", default="params.yaml")
    args = parser.parse_args()
    log = stage_logger("prepare")
    dataset = ParamsView(load_params(args.params), ("dataset",), "prepare").get("dataset")
    passages, provenance = load_dataset(dataset)
    write_jsonl(paths.prepared(args.dataset), (p.to_dict() for p in passages))
    counts = {
        "passages": len(passages),
        "sentences": sum(len(p.sentences) for p in passages),
        "sentence_labelled": sum(p.labels is not None for p in passages),
        "claim_labelled": sum(any(c.label is not None for c in p.claims) for p in passages),
        "response_labelled": sum(p.response_label is not None for p in passages),
        "prompt_labelled": sum(p.prompt_label is not None for p in passages),
        "prompt_only": sum(p.response is None for p in passages),
        "samples_per_passage": sorted({len(p.samples) for p in passages}),
    }
    write_json(paths.provenance(args.dataset), {**provenance, "dataset": dataset["name"], **counts})
    log.info("wrote %s to %s", counts, paths.prepared(args.dataset))


if __name__ == "__main__":
    run_stage("prepare", main)
