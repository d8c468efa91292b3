"""DVC stage `aggregate_selfcheck_ngram`: n-gram counts -> sentence and passage scores.

Reads the sweep knobs (selfcheck_ngram.n / aggregations / lowercase / smoothing_k and
selfcheck.num_samples); pure arithmetic over the cached tokens, seconds for WikiBio.
"""

from __future__ import annotations

import argparse
import time

from hallulab.config import as_int_list, load_params, section
from hallulab.io import read_json, write_json
from hallulab.logs import stage_logger
from hallulab.methods.selfcheck_ngram import score_corpora
from hallulab.text.ngram_corpus import corpora_from_dict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--tokens", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    log = stage_logger("aggregate_selfcheck_ngram")

    params = load_params(args.params)
    cfg = section(params, "selfcheck_ngram")
    num_samples = section(params, "selfcheck")["num_samples"]
    corpora = corpora_from_dict(read_json(args.tokens)["corpora"])
    started = time.perf_counter()
    scores = score_corpora(
        corpora,
        as_int_list(cfg["n"], "selfcheck_ngram.n"),
        list(cfg["aggregations"]),
        num_samples=None if num_samples is None else int(num_samples),
        lowercase=bool(cfg["lowercase"]),
        smoothing_k=float(cfg["smoothing_k"]),
    )
    write_json(args.out, scores.to_dict(), indent=None)
    log.info(
        "%d variants x %d passages in %.2fs; unseen n-gram tokens: %s",
        len(scores.variants),
        len(corpora),
        time.perf_counter() - started,
        scores.diagnostics["unseen_tokens"],
    )


if __name__ == "__main__":
    main()
