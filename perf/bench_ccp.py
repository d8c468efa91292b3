"""Benchmark: what CCP costs over Maximum Probability (Fadeeva et al., 2024, §4: 3-8% of the
LLM's inference on a GPU).

Maximum Probability needs only the white-box pass that gives every response token its
log-probability and top-K alternatives (the ``response_tokens`` artifact). CCP adds the NLI
calls over each (greedy word, alternative) pair in both directions. On a data set's artifacts
(from ``make run`` for the toy set, or ``dvc exp run -S dataset=factualbio``), with empty call
caches and one process:

  inference - the proxy LLM teacher-forcing every response with its top-K (MaxProb's cost);
  ccp       - building CCP's NLI pairs for the configured contexts and classifying them with
              the configured NLI model (what CCP adds);
  warm      - the same NLI request again from the call cache (a K or context sweep's cost);
  bf16      - the NLI pairs again, cold, with ``nli.dtype: bfloat16`` (the CPU path that pays
              where the CPU has AMX, see ``check_nli_bfloat16.py``), with the largest change of
              a class probability against float32.

Prints seconds and the ratio ccp / inference. Usage:

    python perf/bench_ccp.py [--dataset toy] [--threads 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
from ccp_inputs import CCPInputs

from hallulab.artifacts.response_tokens.build import prefix_for
from hallulab.core.call_cache import CallCache
from hallulab.core.config import compose, typed
from hallulab.llm import build_llm
from hallulab.llm.cached import CachedLLM
from hallulab.nli.scorer import NLIKnobs, NLIScorer
from hallulab.tooling.bench_record import BenchRow, record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="toy")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    params = compose([f"dataset={args.dataset}"] if args.dataset != "toy" else [])
    inputs = CCPInputs.read(args.dataset, params["ccp"]["score"])
    records, knobs, top_k, stats = inputs.records, inputs.knobs, inputs.top_k, inputs.token_stats
    prefix = str(params["response_tokens"]["prefix"])
    proxy = params["llm_catalogue"][params["llms"]["proxy"]]

    with tempfile.TemporaryDirectory() as folder, CallCache(Path(folder) / "calls.sqlite") as cache:
        llm = CachedLLM(build_llm({**proxy, "num_threads": args.threads}), cache)
        llm.score([prefix_for(prefix, records[0])], ["warm-up"], top_k=top_k)  # model load, not timed
        started = time.perf_counter()
        llm.score([prefix_for(prefix, p) for p in records], [p.response or "" for p in records], top_k=top_k)
        inference = time.perf_counter() - started

        scorer = NLIScorer(typed(NLIKnobs, params["nli"], "nli"), cache=cache)
        scorer.class_probs(["warm-up"], ["warm-up"])  # model load, not timed
        started = time.perf_counter()
        requests = inputs.requests()
        premises, hypotheses = [p for p, _ in requests.pairs], [h for _, h in requests.pairs]
        float32 = scorer.class_probs(premises, hypotheses)
        ccp = time.perf_counter() - started
        started = time.perf_counter()
        scorer.class_probs(premises, hypotheses)
        warm = time.perf_counter() - started
        half = NLIScorer(replace(scorer.config, dtype="bfloat16"), cache=cache)
        half.class_probs(["warm-up"], ["warm-up"])  # model load, not timed
        started = time.perf_counter()
        bfloat16 = half.class_probs(premises, hypotheses)
        ccp_bf16 = time.perf_counter() - started
    change = float(np.abs(bfloat16 - float32).max())

    tokens = sum(len(t) for t in stats.values())
    print(f"data set {args.dataset}: {len(records)} responses, {tokens} tokens, top-K {top_k}")
    print(f"contexts {list(knobs.nli_contexts)}: {len(requests.pairs)} NLI pairs ({len(set(requests.pairs))} distinct)")
    print(f"inference (MaxProb's cost, {proxy['name']}): {inference:.2f} s")
    print(f"CCP's NLI ({params['nli']['name']}), empty cache: {ccp:.2f} s")
    print(f"CCP's NLI again from the call cache: {warm:.3f} s")
    print(f"CCP's NLI in bfloat16, empty cache: {ccp_bf16:.2f} s (class probabilities move by up to {change:.4f})")
    print(f"ratio CCP / inference: {ccp / inference:.2f} (paper: 0.03-0.08 on a GPU)")
    rows = [
        BenchRow(
            "maxprob",
            f"MaxProb's cost: the white-box pass ({proxy['name']}, {tokens} tokens)",
            round(inference, 3),
            "s",
            1.0,
        ),
        BenchRow(
            "ccp_nli",
            f"CCP's NLI pairs on top ({len(set(requests.pairs))} distinct), empty cache",
            round(ccp, 3),
            "s",
            round(ccp / inference, 2),
        ),
        BenchRow(
            "ccp_nli_warm",
            "CCP's NLI pairs again, from the call cache (a K or context sweep)",
            round(warm, 4),
            "s",
            round(warm / inference, 3),
        ),
        BenchRow(
            "ccp_nli_bf16",
            f"CCP's NLI pairs in bfloat16 (nli.dtype), empty cache (probabilities move by up to {change:.3f})",
            round(ccp_bf16, 3),
            "s",
            round(ccp_bf16 / inference, 2),
        ),
    ]
    setup = {
        "dataset": args.dataset,
        "responses": len(records),
        "tokens": tokens,
        "top_k": top_k,
        "pairs": len(requests.pairs),
        "distinct_pairs": len(set(requests.pairs)),
        "nli": params["nli"]["name"],
    }
    record("ccp", rows, setup, threads=args.threads)


if __name__ == "__main__":
    main()
