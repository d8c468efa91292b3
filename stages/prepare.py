"""DVC stage `prepare`: source data set -> canonical passages (JSONL) + provenance."""

from __future__ import annotations

import argparse

from hallulab.config import load_params, section
from hallulab.data.loaders import load_dataset
from hallulab.io import write_json, write_jsonl
from hallulab.logs import stage_logger


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--out", required=True, help="canonical passages JSONL")
    parser.add_argument("--provenance", required=True, help="provenance JSON")
    args = parser.parse_args()
    log = stage_logger("prepare")

    dataset = section(load_params(args.params), "dataset")
    passages, provenance = load_dataset(dataset)
    write_jsonl(args.out, (p.to_dict() for p in passages))
    labelled = sum(p.labels is not None for p in passages)
    provenance |= {
        "dataset": dataset["name"],
        "passages": len(passages),
        "sentences": sum(len(p.sentences) for p in passages),
        "labelled_passages": labelled,
        "samples_per_passage": sorted({len(p.samples) for p in passages}),
    }
    write_json(args.provenance, provenance)
    log.info("wrote %d passages (%d labelled) to %s", len(passages), labelled, args.out)


if __name__ == "__main__":
    main()
