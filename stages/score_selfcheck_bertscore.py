"""DVC stage `score_selfcheck_bertscore`: 1 - max-F1 for every sentence against every stored
sample (the I x N_max matrix), with the configured BERTScore encoder.

Reads `bertscore` and `spacy` only; N, selection and aggregation are read downstream.
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
from hallulab.methods.selfcheck_bertscore import BERTScoreConfig, BERTScoreSupport, passage_matrices
from hallulab.text.spacy_tokens import SpacyTokenizer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--passages", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    log = stage_logger("score_selfcheck_bertscore")

    params = load_params(args.params)
    config = BERTScoreConfig(**section(params, "bertscore"))
    spacy_cfg = section(params, "spacy")
    passages = load_jsonl_passages(args.passages)
    started = time.perf_counter()
    with CallCache() as cache:
        spacy = SpacyTokenizer(spacy_cfg["model"], batch_size=int(spacy_cfg["batch_size"]), cache=cache)
        scorer = BERTScoreSupport(config, spacy, cache=cache)
        matrices = passage_matrices(passages, scorer)
        stats = cache.stats.as_dict()
    pairs = sum(m.size for m in matrices.values())
    stored = SampleMatrices(
        method="selfcheck_bertscore",
        variant="bertscore",
        identity={"name": config.name, **scorer.identity},
        matrices=matrices,
        diagnostics={"pairs": pairs, "samples_without_long_sentences": scorer.empty_samples, "cache": stats},
    )
    write_json(args.out, stored.to_dict(), indent=None)
    log.info(
        "BERTScore %s: %d passages, %d pairs in %.1fs; %d samples had no sentence > 3 tokens; cache %s",
        config.name,
        len(passages),
        pairs,
        time.perf_counter() - started,
        scorer.empty_samples,
        stats,
    )


if __name__ == "__main__":
    main()
