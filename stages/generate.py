"""DVC stage `generate`: main responses and N_max samples from the configured LLM.

Passes records through when the data set already carries samples (generate.mode=auto or
keep; WikiBio keeps its GPT-3 samples). Writes the passages every later stage reads, the
white-box records of regenerated main responses, and a report with the cache hit rate.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from hallulab.cache import CallCache
from hallulab.config import load_params, section
from hallulab.data.loaders import load_jsonl_passages
from hallulab.generation import GenerateConfig, generate_passages
from hallulab.io import write_json, write_jsonl
from hallulab.llm import build_llm
from hallulab.llm.cached import CachedLLM
from hallulab.logs import stage_logger
from hallulab.text.spacy_tokens import SpacyTokenizer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--passages", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--main-tokens", required=True)
    parser.add_argument("--report", required=True)
    args = parser.parse_args()
    log = stage_logger("generate")

    params = load_params(args.params)
    cfg = GenerateConfig(**section(params, "generate"))
    spacy_cfg = section(params, "spacy")
    passages = load_jsonl_passages(args.passages)
    started = time.perf_counter()
    with CallCache() as cache:
        llm = CachedLLM(build_llm(section(params, "llm")), cache, progress="generate")
        tokenizer = SpacyTokenizer(spacy_cfg["model"], batch_size=int(spacy_cfg["batch_size"]), cache=cache)
        generated, mains, report = generate_passages(passages, llm, cfg, tokenizer.sentences)
        stats = cache.stats.as_dict()
    write_jsonl(args.out, (p.to_dict() for p in generated))
    write_jsonl(args.main_tokens, mains)
    write_json(args.report, {**dataclasses.asdict(report), "cache": stats, "seconds": time.perf_counter() - started})
    log.info("%s; cache %s", dataclasses.asdict(report), stats)


if __name__ == "__main__":
    main()
