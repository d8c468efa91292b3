"""DVC stage `score_selfcheck_nli`: P(contradict | sentence, sample) for every sentence and
every stored sample (the I x N_max matrix), with the configured NLI model.

Reads only `nli` (which model); N, sample selection and aggregation are read downstream,
so a sweep over N re-runs no model call, and every pair goes through the call cache, so
returning to an already-scored NLI model is a cache hit.
"""

from __future__ import annotations

import argparse
import time

from hallulab.cache import CallCache
from hallulab.config import load_params, section
from hallulab.data.loaders import load_jsonl_passages
from hallulab.io import write_json
from hallulab.logs import stage_logger
from hallulab.methods.sample_matrix import SampleMatrices
from hallulab.methods.selfcheck_nli import NLIConfig, NLIScorer, passage_matrices


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--passages", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    log = stage_logger("score_selfcheck_nli")

    config = NLIConfig(**section(load_params(args.params), "nli"))
    passages = load_jsonl_passages(args.passages)
    started = time.perf_counter()
    with CallCache() as cache:
        scorer = NLIScorer(config, cache=cache)
        matrices = passage_matrices(passages, scorer, progress=True)
        stats = cache.stats.as_dict()
    pairs = sum(m.size for m in matrices.values())
    seconds = time.perf_counter() - started
    stored = SampleMatrices(
        method="selfcheck_nli",
        variant="nli",
        identity={"name": config.name, **scorer.identity},
        matrices=matrices,
        diagnostics={"pairs": pairs, "cache": stats},
    )
    write_json(args.out, stored.to_dict(), indent=None)
    log.info(
        "NLI model %s: %d passages, %d pairs in %.1fs; cache %s (%s)",
        config.name,
        len(passages),
        pairs,
        seconds,
        stats,
        cache.path,
    )


if __name__ == "__main__":
    main()
