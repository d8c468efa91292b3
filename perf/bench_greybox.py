"""Benchmark: the token-probability baselines side by side with lm-polygraph 0.7.0, same
questions, same model, same machine, one run.

Maximum Probability, Perplexity and Maximum Entropy (Fadeeva et al., 2024, Eq. 1-3; CCP's
baselines) and SelfCheckGPT's Avg(H) all read one thing: the greedy answer's per-token
log-probabilities and next-token entropies. Each side answers the same NQ-open questions
greedily with the embedded SmolLM2-135M (one model object, the prompt rendered once by the
``hf`` backend's chat template), in batches of the configured size:

  reference - lm-polygraph's ``WhiteboxModel`` + ``GreedyProbsCalculator`` (its K alternatives,
              no attentions) + ``EntropyCalculator`` + the ``MaximumSequenceProbability``,
              ``Perplexity`` and ``MeanTokenEntropy`` estimators (Maximum Entropy as the
              largest of its ``entropy`` statistic: 0.7.0 has no sequence-level estimator of it);
  cold      - hallulab's ``hf`` backend generating with its top-K statistics, through an empty
              call cache, and :mod:`hallulab.methods.token_statistics`;
  warm      - the same request from the call cache (what a sweep point pays);
  floor     - transformers' ``generate`` alone over the same batches, no scores kept: the LLM's
              forward passes, which bound both sides.

The scores are compared on the answers whose greedy tokens agree, over the generated tokens:
lm-polygraph's calculator also keeps the end-of-sequence token's log-probability and entropy
(hallulab stops before it), so its sequence scores are recomputed without that last position
for the comparison. Usage:

    python perf/bench_greybox.py [--questions 24] [--new-tokens 48] [--threads 2]
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
from hallulab.methods.token_statistics import max_entropy, max_probability, mean_entropy, perplexity
from hallulab.tooling.bench_record import print_rows, rate_rows, record, timed

Scores = dict[str, list[float]]


def batches(items: list[str], size: int) -> list[list[str]]:
    return [items[start : start + size] for start in range(0, len(items), size)]


def reference_run(model: Any, texts: list[str], new_tokens: int, k: int, batch_size: int) -> dict[str, list[Any]]:
    """lm-polygraph's statistics and estimators over ``texts``, batch by batch."""
    from lm_polygraph.estimators import MaximumSequenceProbability, MeanTokenEntropy, Perplexity
    from lm_polygraph.stat_calculators import EntropyCalculator, GreedyProbsCalculator

    greedy, entropy = GreedyProbsCalculator(output_attentions=False, n_alternatives=k), EntropyCalculator()
    estimators = {"msp": MaximumSequenceProbability(), "ppl": Perplexity(), "mean_entropy": MeanTokenEntropy()}
    out: dict[str, list[Any]] = {"tokens": [], "ll": [], "entropy": [], **{name: [] for name in estimators}}
    out["max_entropy"] = []
    for chunk in batches(texts, batch_size):
        stats = greedy({}, chunk, model, max_new_tokens=new_tokens)
        stats.update(entropy(stats, chunk, model, max_new_tokens=new_tokens))
        for name, estimator in estimators.items():
            out[name].extend(float(v) for v in estimator(stats))
        out["max_entropy"].extend(float(np.max(e)) for e in stats["entropy"])
        out["tokens"].extend(stats["greedy_tokens"])
        out["ll"].extend([float(v) for v in row] for row in stats["greedy_log_likelihoods"])
        out["entropy"].extend([float(v) for v in row] for row in stats["entropy"])
    return out


def hallulab_scores(generations: list[Generation]) -> Scores:
    """hallulab's baselines (higher = less certain) from each answer's token statistics."""
    scores: Scores = {"maxprob": [], "perplexity": [], "mean_entropy": [], "max_entropy": []}
    for generation in generations:
        logprobs = [t.logprob for t in generation.tokens]
        entropies = [float(t.entropy) for t in generation.tokens if t.entropy is not None]
        scores["maxprob"].append(max_probability(logprobs))
        scores["perplexity"].append(perplexity(logprobs))
        scores["mean_entropy"].append(mean_entropy(entropies))
        scores["max_entropy"].append(max_entropy(entropies))
    return scores


def largest_differences(theirs: dict[str, list[Any]], ours: list[Generation], eos: int) -> tuple[int, dict[str, float]]:
    """On the answers whose generated tokens agree: the largest |difference| of each per-token
    input and of each score, the reference's recomputed without its end-of-sequence position."""
    worst = {"log_probability": 0.0, "entropy": 0.0, "maxprob_as_neg_log": 0.0, "perplexity_as_log": 0.0}
    worst |= {"mean_entropy": 0.0, "max_entropy": 0.0}
    agreeing = 0
    for i, generation in enumerate(ours):
        tokens = list(theirs["tokens"][i])
        kept = len(tokens) - (1 if tokens and tokens[-1] == eos else 0)
        if tokens[:kept] != [t.token_id for t in generation.tokens] or kept == 0:
            continue
        agreeing += 1
        ll, entropy = np.array(theirs["ll"][i][:kept]), np.array(theirs["entropy"][i][:kept])
        mine_ll = np.array([t.logprob for t in generation.tokens])
        mine_h = np.array([float(t.entropy) for t in generation.tokens if t.entropy is not None])
        worst["log_probability"] = max(worst["log_probability"], float(np.abs(ll - mine_ll).max()))
        worst["entropy"] = max(worst["entropy"], float(np.abs(entropy - mine_h).max()))
        pairs = {
            "maxprob_as_neg_log": (-ll.sum(), -mine_ll.sum()),  # 1 - prod p, read as -sum log p
            "perplexity_as_log": (-ll.mean(), math.log(perplexity(mine_ll))),
            "mean_entropy": (entropy.mean(), mean_entropy(mine_h)),
            "max_entropy": (entropy.max(), max_entropy(mine_h)),
        }
        for name, (a, b) in pairs.items():
            worst[name] = max(worst[name], abs(float(a) - float(b)))
    return agreeing, {name: float(f"{value:.2e}") for name, value in worst.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=24)
    parser.add_argument("--new-tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    params = compose(["dataset=nq_open"])
    k = int(params["generate"]["top_k_alternatives"])
    configured = params["llm_catalogue"][params["llms"]["generator"]]
    llm = build_llm({**configured, "num_threads": args.threads})
    assert isinstance(llm, HFLLM), "the bench compares the hf backend's white-box path"
    batch_size = int(configured["batch_size"])
    questions = [str(p.prompt) for p in load_dataset({**dataset_config("nq_open"), "limit": args.questions})[0]]
    texts = [llm.render(q) for q in questions]

    from lm_polygraph import WhiteboxModel
    from lm_polygraph.utils.generation_parameters import GenerationParameters

    tokenizer = copy.copy(llm.tokenizer)  # lm-polygraph pads on the left, as batched generation needs
    tokenizer.padding_side = "left"
    reference_model = WhiteboxModel(
        llm.model, tokenizer, model_path=configured["name"], generation_parameters=GenerationParameters()
    )
    reference_model.generation_parameters.max_new_tokens = args.new_tokens
    reference_run(reference_model, texts[:1], 2, k, 1)  # model load and first-call set-up, not timed
    theirs, reference_seconds = timed(partial(reference_run, reference_model, texts, args.new_tokens, k, batch_size))

    decoding = DecodingParams(max_new_tokens=args.new_tokens, temperature=0.0, top_k_alternatives=k)
    with tempfile.TemporaryDirectory() as folder, CallCache(Path(folder) / "calls.sqlite") as cache:
        cached = CachedLLM(llm, cache)
        ours_cold, cold_seconds = timed(partial(cached.generate, questions, decoding, [None] * len(questions)))
        scores = hallulab_scores(ours_cold)
        _, warm_seconds = timed(lambda: hallulab_scores(cached.generate(questions, decoding, [None] * len(questions))))
    assert len(scores["maxprob"]) == len(questions)

    def bare_generate() -> None:
        for chunk in batches(texts, batch_size):
            batch = tokenizer(chunk, padding=True, return_tensors="pt", add_special_tokens=False)
            with torch.inference_mode():
                llm.model.generate(
                    **batch, do_sample=False, max_new_tokens=args.new_tokens, pad_token_id=tokenizer.pad_token_id
                )

    _, floor_seconds = timed(bare_generate)
    agreeing, differences = largest_differences(theirs, ours_cold, int(tokenizer.eos_token_id))

    units = len(questions)
    rows = rate_rows(
        "greybox",
        "answers/s",
        units,
        {
            "reference": (
                "lm-polygraph 0.7.0 WhiteboxModel + GreedyProbsCalculator + EntropyCalculator + MaximumSequence"
                "Probability / Perplexity / MeanTokenEntropy",
                reference_seconds,
            ),
            "cold": ("hallulab default path (hf backend, top-K statistics), empty call cache", cold_seconds),
            "warm": ("hallulab, a sweep point (the same answers from the call cache)", warm_seconds),
            "floor": (
                "the floor: transformers' generate alone over the same batches (the LLM's forward passes, no scores)",
                floor_seconds,
            ),
        },
    )
    print_rows(rows)
    print(f"{agreeing} of {units} greedy answers token for token the same; largest |differences| {differences}")
    setup = {
        "dataset": "nq_open",
        "questions": units,
        "new_tokens": args.new_tokens,
        "k": k,
        "batch_size": batch_size,
        "llm": configured["name"],
        "same_greedy_answers": agreeing,
        "max_abs_difference": differences,
    }
    record("greybox", rows, setup, threads=args.threads)


if __name__ == "__main__":
    main()
