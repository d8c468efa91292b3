"""Benchmark: the hf backend on the embedded SmolLM2-135M (CPU unless CUDA is present).

Prints tokens per second for generation and teacher-forced scoring, batched (the
configured batch size) against one request at a time; the time of SelfCheckGPT-Prompt's
prompts on the toy set (each sample as the context of each sentence) with the opening that
prompts share encoded once (:func:`hallulab.llm.hf.prefix_batches`) against every prompt
encoded whole; and the speed-up of a call-cache hit over a miss. Ratios, not assertions.
Usage:

    python perf/bench_llm.py [--prompts 16] [--new-tokens 32] [--batch-size N] [--threads 2]
"""

from __future__ import annotations

import argparse
import math
import tempfile
from functools import partial
from pathlib import Path

from hallulab.core.call_cache import CallCache
from hallulab.core.config import compose
from hallulab.data.loaders import load_jsonl_records
from hallulab.llm import build_llm, hf
from hallulab.llm.base import DecodingParams
from hallulab.llm.cached import CachedLLM
from hallulab.llm.hf import HFLLM
from hallulab.methods.selfcheck_prompt.prompting import PAPER_TEMPLATE, build_prompt
from hallulab.tooling.bench_record import BenchRow, record, timed

TOY = Path(__file__).resolve().parents[1] / "data" / "toy" / "passages.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=None, help="default: the configured batch size")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    configured = compose()["llm_catalogue"]["smollm2"]
    args.batch_size = args.batch_size or int(configured["batch_size"])
    cfg = {**configured, "batch_size": args.batch_size, "num_threads": args.threads}
    batched = build_llm(cfg)
    single = build_llm({**cfg, "batch_size": 1})
    assert isinstance(batched, HFLLM) and isinstance(single, HFLLM)
    _, load = timed(lambda: batched.model)
    single._loaded = batched._loaded  # share the weights
    print(f"device {batched.device}, dtype {batched.dtype}, threads {args.threads}, load {load:.1f}s")

    records = load_jsonl_records(TOY)
    prompts = [f"{p.prompt} (version {i})" for i in range(args.prompts // len(records) + 1) for p in records]
    prompts = prompts[: args.prompts]
    params = DecodingParams(max_new_tokens=args.new_tokens, temperature=1.0)
    seeds = list(range(len(prompts)))
    rates: dict[str, float] = {}
    for name, llm in (("batched", batched), ("one at a time", single)):
        outputs, seconds = timed(partial(llm.generate, prompts, params, seeds))
        tokens = sum(len(o.tokens) for o in outputs)
        rates[f"generate {name}"] = tokens / seconds
        print(f"generation  {name:>14}: {tokens / seconds:8.1f} tokens/s ({tokens} tokens, {seconds:.1f}s)")

    texts = [s for p in records for s in p.samples][: args.prompts]
    for name, llm in (("batched", batched), ("one at a time", single)):
        scored, seconds = timed(partial(llm.score, [""] * len(texts), texts))
        tokens = sum(len(s) for s in scored)
        rates[f"score {name}"] = tokens / seconds
        print(f"scoring     {name:>14}: {tokens / seconds:8.1f} tokens/s ({tokens} tokens, {seconds:.2f}s)")

    verdict_prompts = [
        build_prompt(PAPER_TEMPLATE, sample, sentence)
        for p in records
        for sample in p.samples
        for sentence in p.sentences
    ]
    verdict = DecodingParams(max_new_tokens=5, top_k_alternatives=20)
    _, shared = timed(lambda: batched.generate(verdict_prompts, verdict, [None] * len(verdict_prompts)))
    share = hf.SHARED_OPENING_SHARE
    hf.SHARED_OPENING_SHARE = math.inf  # no neighbours agree enough: every prompt is a group of one
    _, whole = timed(lambda: batched.generate(verdict_prompts, verdict, [None] * len(verdict_prompts)))
    hf.SHARED_OPENING_SHARE = share
    print(f"prompt verdicts ({len(verdict_prompts)}): opening shared {shared:.1f}s, every prompt whole {whole:.1f}s")

    with tempfile.TemporaryDirectory() as tmp, CallCache(Path(tmp) / "c.sqlite") as cache:
        cached = CachedLLM(batched, cache)
        _, miss = timed(lambda: cached.generate(prompts, params, seeds))
        _, hit = timed(lambda: cached.generate(prompts, params, seeds))
    print(f"call cache: miss {miss:.2f}s, hit {hit * 1000:.1f}ms, speed-up {miss / hit:.0f}x")
    gen, score = rates["generate one at a time"], rates["score one at a time"]
    rows = [
        BenchRow("generate_single", "generation, one prompt at a time", round(gen, 1), "tokens/s", 1.0),
        BenchRow(
            "generate_batched",
            f"generation, batches of {args.batch_size}",
            round(rates["generate batched"], 1),
            "tokens/s",
            round(rates["generate batched"] / gen, 2),
        ),
        BenchRow("score_single", "teacher-forced scoring, one text at a time", round(score, 1), "tokens/s", 1.0),
        BenchRow(
            "score_batched",
            f"teacher-forced scoring, batches of {args.batch_size}",
            round(rates["score batched"], 1),
            "tokens/s",
            round(rates["score batched"] / score, 2),
        ),
        BenchRow(
            "prompt_whole",
            f"{len(verdict_prompts)} SelfCheckGPT-Prompt verdicts (toy), every prompt encoded whole",
            round(whole, 2),
            "s",
            1.0,
        ),
        BenchRow(
            "prompt_shared_opening",
            "the same verdicts, the opening that prompts share encoded once",
            round(shared, 2),
            "s",
            round(whole / shared, 2),
        ),
        BenchRow("cache_miss", f"{len(prompts)} generations, call-cache miss", round(miss, 3), "s", 1.0),
        BenchRow(
            "cache_hit",
            f"the same {len(prompts)} generations, call-cache hit",
            round(hit, 4),
            "s",
            round(miss / hit, 0),
        ),
    ]
    setup = {"model": cfg["name"], "backend": "hf", "prompts": len(prompts), "new_tokens": args.new_tokens}
    record("llm", rows, setup, threads=args.threads)


if __name__ == "__main__":
    main()
