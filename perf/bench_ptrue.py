"""Benchmark: P(True) (Kadavath et al., 2022; CCP's claim baseline, Fadeeva et al., 2024, Eq. 4)
side by side with lm-polygraph 0.7.0's ``ClaimPromptCalculator`` + ``PTrueClaim``, same claims,
same model, same machine, one run.

The LLM is asked whether a claim answers a question truly, and the score is read from the first
reply token. Both sides ask the embedded SmolLM2-135M (one model object) the released wording
(``conf/prompts/ccp_ptrue.yaml``) about the NQ-open data set's answers, in batches of the
configured size; lm-polygraph applies no chat template, so hallulab's is off here (the same
tokens in):

  reference - ``ClaimPromptCalculator`` (one generated token with its scores, the
              log-probability of the token "True") + ``PTrueClaim``;
  cold      - the CCP score step's request (one greedy token with its top-K) through an empty
              call cache, read by :func:`hallulab.methods.ccp.score.p_true`;
  warm      - the same request from the call cache (a sweep point).

The readings differ on purpose in one place: lm-polygraph takes the probability of the one
token "True"; hallulab sums the top-K tokens that read "true" once stripped and lower-cased
(" True", "true", ...), so its P(True) is never lower. The set-up records the largest difference
and on how many claims the two agree. Usage:

    python perf/bench_ptrue.py [--claims 64] [--threads 2]
"""

from __future__ import annotations

import argparse
import copy
import math
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hallulab.core.call_cache import CallCache
from hallulab.core.config import compose, dataset_config
from hallulab.data.loaders import load_dataset
from hallulab.llm import build_llm
from hallulab.llm.base import DecodingParams, Generation
from hallulab.llm.cached import CachedLLM
from hallulab.llm.hf import HFLLM
from hallulab.llm.prompts import load_prompt
from hallulab.methods.ccp.score import p_true
from hallulab.tooling.bench_record import print_rows, rate_rows, record, timed


def reference_p_true(model: Any, questions: list[str], claims: list[str], batch_size: int) -> list[float]:
    """lm-polygraph's P(True) of every claim (exp of minus ``PTrueClaim``'s score)."""
    from lm_polygraph.estimators.claim.p_true import PTrueClaim
    from lm_polygraph.stat_calculators import ClaimPromptCalculator

    calculator, estimator = ClaimPromptCalculator(), PTrueClaim()
    found: list[float] = []
    for start in range(0, len(claims), batch_size):
        chunk_q, chunk_c = questions[start : start + batch_size], claims[start : start + batch_size]
        stats = calculator(
            {"claim_input_texts_concatenated": chunk_q, "claim_texts_concatenated": chunk_c}, chunk_q, model
        )
        stats["claims"] = [[claim] for claim in chunk_c]
        found.extend(math.exp(-score[0]) for score in estimator(stats))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", type=int, default=64, help="NQ-open questions with their answers")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    params = compose(["dataset=nq_open"])
    top_k = int(params["ccp"]["score"]["ptrue_top_k"])
    configured = params["llm_catalogue"][params["llms"]["proxy"]]
    llm = build_llm({**configured, "num_threads": args.threads, "chat_template": False})
    assert isinstance(llm, HFLLM), "the bench compares the hf backend with the transformers model it loads"
    batch_size = int(configured["batch_size"])
    template = load_prompt(str(params["ccp"]["ptrue_prompt"]))
    records = [p for p in load_dataset({**dataset_config("nq_open"), "limit": args.claims})[0] if p.response]
    questions, claims = [str(p.prompt) for p in records], [str(p.response) for p in records]

    from lm_polygraph import WhiteboxModel

    tokenizer = copy.copy(llm.tokenizer)  # lm-polygraph pads on the left, as batched generation needs
    tokenizer.padding_side = "left"
    reference_model = WhiteboxModel(llm.model, tokenizer, model_path=configured["name"])
    reference_p_true(reference_model, questions[:1], claims[:1], 1)  # first-call set-up, not timed
    theirs, reference_seconds = timed(partial(reference_p_true, reference_model, questions, claims, batch_size))

    prompts = [template.messages(question=q, claim=c) for q, c in zip(questions, claims, strict=True)]
    decoding = DecodingParams(max_new_tokens=1, temperature=0.0, top_k_alternatives=top_k)

    def ours(cached: CachedLLM) -> list[float]:
        replies: list[Generation] = cached.generate(prompts, decoding)
        return [p_true(reply.tokens) for reply in replies]

    with tempfile.TemporaryDirectory() as folder, CallCache(Path(folder) / "calls.sqlite") as cache:
        cached = CachedLLM(llm, cache)
        mine, cold_seconds = timed(partial(ours, cached))
        _, warm_seconds = timed(partial(ours, cached))
    difference = np.abs(np.array(mine) - np.array(theirs))
    agreeing = int((difference < 1e-4).sum())

    units = len(claims)
    rows = rate_rows(
        "ptrue",
        "claims/s",
        units,
        {
            "reference": ("lm-polygraph 0.7.0 ClaimPromptCalculator + PTrueClaim", reference_seconds),
            "cold": ("hallulab default path (CCP's P(True) request, top-K), empty call cache", cold_seconds),
            "warm": ("hallulab, a sweep point (the same replies from the call cache)", warm_seconds),
        },
    )
    print_rows(rows)
    print(f"{agreeing} of {units} claims agree within 1e-4; largest |difference| {difference.max():.3g}")
    setup = {
        "dataset": "nq_open",
        "claims": units,
        "top_k": top_k,
        "batch_size": batch_size,
        "llm": configured["name"],
        "chat_template": False,
        "agreeing_claims": agreeing,
        "max_abs_difference": float(f"{difference.max():.3g}"),
        "ours_never_lower": bool((np.array(mine) >= np.array(theirs) - 1e-6).all()),
    }
    record("ptrue", rows, setup, threads=args.threads)


if __name__ == "__main__":
    main()
