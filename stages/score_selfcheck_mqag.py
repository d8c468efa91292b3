"""DVC stage `score_selfcheck_mqag`: generate questions for every sentence and answer them
against the response and every stored sample (the expensive half of MQAG).

Reads selfcheck_mqag.{roles, hub, generate, llm}; scoring rules, betas, AT and N are read
by the aggregate stage.
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
from hallulab.methods.mqag_roles import HubRoles, LLMRoles, MQAGRoles
from hallulab.methods.selfcheck_mqag import build_questions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--passages", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    log = stage_logger("score_selfcheck_mqag")

    cfg = section(load_params(args.params), "selfcheck_mqag")
    generate = cfg["generate"]
    passages = load_jsonl_passages(args.passages)
    started = time.perf_counter()
    with CallCache() as cache:
        roles: MQAGRoles
        if cfg["roles"] == "llm_substitute":
            llm = CachedLLM(build_llm(cfg["llm"]), cache, progress="MQAG roles")
            roles = LLMRoles(
                llm, top_k=int(generate["top_k"]), question_temperature=float(generate["question_temperature"])
            )
        elif cfg["roles"] == "hub":
            roles = HubRoles(**cfg["hub"])
        else:
            raise SystemExit(f"selfcheck_mqag.roles: {cfg['roles']!r} is not llm_substitute or hub")
        stored = build_questions(
            passages,
            roles,
            num_questions=int(generate["num_questions_per_sentence"]),
            seed=int(generate["seed"]),
            cache=cache,
        )
        stats = cache.stats.as_dict()
    write_json(args.out, {**stored.to_dict(), "cache": stats}, indent=None)
    log.info(
        "MQAG (%s): %s in %.1fs; cache %s",
        cfg["roles"],
        dict(stored.diagnostics),
        time.perf_counter() - started,
        stats,
    )


if __name__ == "__main__":
    main()
