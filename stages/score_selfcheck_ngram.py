"""DVC stage `score_selfcheck_ngram`: spaCy sentences + tokens for every passage and sample.

The only expensive part of SelfCheckGPT n-gram; it reads no sweep knob (n, N, aggregation),
so sweeps re-run only the aggregate and evaluate stages.
"""

from __future__ import annotations

import argparse
import time

from hallulab.cache import CallCache
from hallulab.config import load_params, section
from hallulab.data.loaders import load_jsonl_passages
from hallulab.io import write_json
from hallulab.logs import stage_logger
from hallulab.text.ngram_corpus import build_ngram_corpora, corpora_to_dict
from hallulab.text.spacy_tokens import SpacyTokenizer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--passages", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    log = stage_logger("score_selfcheck_ngram")

    params = load_params(args.params)
    spacy_cfg = section(params, "spacy")
    ngram_cfg = section(params, "selfcheck_ngram")
    passages = load_jsonl_passages(args.passages)
    started = time.perf_counter()
    with CallCache() as cache:
        tokenizer = SpacyTokenizer(spacy_cfg["model"], batch_size=int(spacy_cfg["batch_size"]), cache=cache)
        corpora = build_ngram_corpora(passages, tokenizer, ngram_cfg["response_split"])
        stats = cache.stats.as_dict()
    payload = {"spacy": tokenizer.identity, "response_split": ngram_cfg["response_split"]}
    payload["corpora"] = corpora_to_dict(corpora)
    write_json(args.out, payload, indent=None)
    log.info(
        "tokenised %d passages in %.1fs; cache %s (%s)",
        len(corpora),
        time.perf_counter() - started,
        stats,
        cache.path,
    )


if __name__ == "__main__":
    main()
