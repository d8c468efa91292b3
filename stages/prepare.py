"""DVC stage `prepare`: source data set -> canonical passages (JSONL) + provenance."""

from __future__ import annotations

import argparse

from hallulab.core.io import write_json, write_jsonl
from hallulab.data.loaders import load_dataset
from hallulab.pipeline import paths
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.runner import run_stage, stage_logger
from hallulab.text.language import probably_not_english


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--params", default="params.yaml")
    args = parser.parse_args()
    log = stage_logger("prepare")
    dataset = ParamsView.load(args.params, ("dataset",), "prepare").get("dataset")
    records, provenance = load_dataset(dataset)
    write_jsonl(paths.prepared(args.dataset), (p.to_dict() for p in records))
    counts = {
        "passages": len(records),
        "sentences": sum(len(p.sentences) for p in records),
        "sentence_labelled": sum(p.labels is not None for p in records),
        "claim_labelled": sum(any(c.label is not None for c in p.claims) for p in records),
        "response_labelled": sum(p.response_label is not None for p in records),
        "prompt_labelled": sum(p.prompt_label is not None for p in records),
        "prompt_only": sum(p.response is None for p in records),
        "samples_per_passage": sorted({len(p.samples) for p in records}),
        # a blank sample is kept (an empty reply is a sample that supports nothing, as an
        # empty generation is) but counted, and the records holding one are named in the log
        "blank_samples": sum(not s.strip() for p in records for s in p.samples),
    }
    foreign = probably_not_english(
        (p.id, " ".join(filter(None, [p.prompt or "", p.response or "", *p.samples]))) for p in records
    )
    counts["probably_not_english"] = len(foreign)
    if foreign:
        log.warning(
            "%d record(s) look not English (few English function and common words), and the spaCy model "
            "(spacy.model) is English: sentences, tokens and entities may be poor: %s%s",
            len(foreign),
            ", ".join(repr(i) for i in foreign[:5]),
            " ..." if len(foreign) > 5 else "",
        )
    with_blank = [p.id for p in records if any(not s.strip() for s in p.samples)]
    if with_blank:
        log.warning(
            "%d blank sample(s) in %d record(s), kept as samples that support nothing: %s%s",
            counts["blank_samples"],
            len(with_blank),
            ", ".join(repr(i) for i in with_blank[:5]),
            " ..." if len(with_blank) > 5 else "",
        )
    write_json(paths.provenance(args.dataset), {**provenance, "dataset": dataset["name"], **counts})
    log.info("wrote %s to %s", counts, paths.prepared(args.dataset))


if __name__ == "__main__":
    run_stage("prepare", main)
