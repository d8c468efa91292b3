"""DVC stage `score_greybox`: teacher-force every response through the configured LLM.

Stores per-token log-probability, full-vocabulary entropy and character offset; the cheap
aggregate stage turns them into sentence and passage scores.
"""

from __future__ import annotations

import argparse
import time

from hallulab.cache import CallCache
from hallulab.config import load_params, section
from hallulab.data.loaders import load_jsonl_passages
from hallulab.io import write_json
from hallulab.llm import build_llm
from hallulab.llm.cached import CachedLLM
from hallulab.logs import stage_logger


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--passages", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    log = stage_logger("score_greybox")

    params = load_params(args.params)
    llm_cfg = section(params, "llm")
    prefix = section(params, "greybox")["prefix"]
    passages = load_jsonl_passages(args.passages)
    started = time.perf_counter()
    with CallCache() as cache:
        backend = build_llm(llm_cfg)
        if not backend.capabilities.teacher_forcing:
            raise SystemExit(f"llm {llm_cfg.get('name')!r} cannot teacher-force text; choose a white-box backend")
        llm = CachedLLM(backend, cache, progress="teacher-forcing")
        scored = llm.score([prefix] * len(passages), [p.response for p in passages])
        stats = cache.stats.as_dict()
    tokens = sum(len(s) for s in scored)
    write_json(
        args.out,
        {
            "llm": backend.identity().as_key(),
            "tokens": {p.id: [t.to_dict() for t in s] for p, s in zip(passages, scored, strict=True)},
        },
        indent=None,
    )
    seconds = time.perf_counter() - started
    log.info("%d passages, %d tokens in %.1fs; cache %s", len(passages), tokens, seconds, stats)


if __name__ == "__main__":
    main()
