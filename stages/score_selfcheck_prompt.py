"""DVC stage `score_selfcheck_prompt`: ask the evaluator LLM whether each sample supports
each sentence; store the 0 / 0.5 / 1 verdicts as the I x N_max matrix and count the replies
that were neither Yes nor No.

Reads `selfcheck_prompt` only (template, decoding, its `llm`); N is read downstream.
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
from hallulab.methods.sample_matrix import SampleMatrices
from hallulab.methods.selfcheck_prompt import PromptConfig, passage_matrices


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--passages", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    log = stage_logger("score_selfcheck_prompt")

    raw = section(load_params(args.params), "selfcheck_prompt")
    llm_cfg = raw.pop("llm")
    config = PromptConfig(**raw)
    passages = load_jsonl_passages(args.passages)
    started = time.perf_counter()
    with CallCache() as cache:
        backend = build_llm(llm_cfg)
        llm = CachedLLM(backend, cache, progress="prompt verdicts")
        matrices, verdicts = passage_matrices(passages, llm, config)
        stats = cache.stats.as_dict()
    report = verdicts.as_dict()
    stored = SampleMatrices(
        method="selfcheck_prompt",
        variant="prompt",
        identity={"llm": backend.identity().as_key(), "template": config.template},
        matrices=matrices,
        diagnostics={"verdicts": report, "cache": stats},
    )
    write_json(args.out, stored.to_dict(), indent=None)
    log.info(
        "%s: %d replies (%d yes, %d no, %d neither -> 0.5) in %.1fs; cache %s",
        llm_cfg.get("name"),
        report["replies"],
        report["yes"],
        report["no"],
        report["other"],
        time.perf_counter() - started,
        stats,
    )


if __name__ == "__main__":
    main()
