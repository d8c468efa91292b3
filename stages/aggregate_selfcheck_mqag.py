"""DVC stage `aggregate_selfcheck_mqag`: stored MQAG answers -> counting / Bayes / Bayes-with-
alpha sentence and passage scores, for the chosen N samples. Pure arithmetic."""

from __future__ import annotations

import argparse
import time

from hallulab.config import load_params, section
from hallulab.io import read_json, write_json
from hallulab.logs import stage_logger
from hallulab.methods.sample_matrix import SampleSelection, selected_columns
from hallulab.methods.selfcheck_mqag import MQAGScoring, StoredMQAG, aggregate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--questions", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    log = stage_logger("aggregate_selfcheck_mqag")

    params = load_params(args.params)
    raw = section(params, "selfcheck_mqag")["score"]
    scoring = MQAGScoring(
        methods=tuple(raw["methods"]),
        beta1=float(raw["beta1"]),
        beta2=float(raw["beta2"]),
        answerability_threshold=float(raw["answerability_threshold"]),
    )
    selection = SampleSelection.from_params(section(params, "selfcheck"))
    started = time.perf_counter()
    stored = StoredMQAG.from_dict(read_json(args.questions))
    scores = aggregate(stored, scoring, lambda pid, available: selected_columns(pid, available, selection))
    write_json(args.out, scores.to_dict(), indent=None)
    log.info(
        "%d passages, variants %s in %.2fs", len(stored.questions), list(scores.variants), time.perf_counter() - started
    )


if __name__ == "__main__":
    main()
