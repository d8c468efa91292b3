"""Benchmark: the LLM floor, the embedded SmolLM2 in hallulab's ``hf`` backend against llama.cpp
(llama-cpp-python, in process) on the same GGUF file and the same cores.

Every LLM-bound method pays one of two roles: generation (samples, verdicts, answers) and
teacher-forcing (the log-probabilities of a given text: grey-box, CCP, Semantic Entropy). Both
sides get the same token ids: the toy prompts rendered by the ``hf`` backend (its chat
template), greedy with no repetition penalty. Rows, tokens per second:

  hf generate        - ``HFLLM.generate``, greedy, in the configured batches;
  llama.cpp generate - ``Llama.generate`` one prompt at a time (llama-cpp-python decodes one
                       sequence), greedy (``top_k=1``, ``repeat_penalty=1``);
  hf score           - ``HFLLM.score`` of the greedy texts after their prompts;
  llama.cpp score    - ``Llama.eval`` of prompt + text with every position's logits kept,
                       log-softmax per position.

The set-up records what switching a role would change: the share of prompts whose greedy text
is the same on both sides, and the largest difference of a teacher-forced token's
log-probability. The ``hf`` backend reads the GGUF's quantised weights back to float32 and
computes in float32; llama.cpp computes on the quantised blocks, so the two differ by its
rounding. Usage:

    python perf/bench_llm_floor.py [--prompts 16] [--new-tokens 32] [--threads 2]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from hallulab.core.config import compose
from hallulab.core.package_files import find_package_file
from hallulab.data.loaders import load_jsonl_records
from hallulab.llm import build_llm
from hallulab.llm.base import DecodingParams
from hallulab.llm.hf import HFLLM
from hallulab.tooling.bench_record import BenchRow, print_rows, record, timed

TOY = Path(__file__).resolve().parents[1] / "data" / "toy" / "passages.jsonl"


def llamacpp_greedy(llm: object, prompt: list[int], new_tokens: int, stops: set[int]) -> list[int]:
    """Greedy continuation of ``prompt`` by llama.cpp, stopping at a stop token."""
    out: list[int] = []
    llm.reset()  # type: ignore[attr-defined]
    for token in llm.generate(prompt, top_k=1, top_p=1.0, temp=0.0, repeat_penalty=1.0):  # type: ignore[attr-defined]
        if token in stops or len(out) == new_tokens:
            break
        out.append(int(token))
    return out


def llamacpp_logprobs(llm: object, prompt: list[int], text: list[int]) -> np.ndarray:
    """Teacher-forced log-probability of each token of ``text`` after ``prompt``."""
    llm.reset()  # type: ignore[attr-defined]
    llm.eval(prompt + text)  # type: ignore[attr-defined]
    logits = np.asarray(llm.scores[: len(prompt) + len(text)], dtype=np.float64)  # type: ignore[attr-defined]
    window = logits[len(prompt) - 1 : len(prompt) - 1 + len(text)]
    shifted = window - window.max(axis=1, keepdims=True)
    logprobs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return logprobs[np.arange(len(text)), text]


def main() -> None:
    from llama_cpp import Llama

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    configured = compose()["llm_catalogue"]["smollm2"]
    hf = build_llm({**configured, "num_threads": args.threads})
    assert isinstance(hf, HFLLM)
    records = load_jsonl_records(TOY)
    prompts = [f"{p.prompt} (version {i})" for i in range(args.prompts // len(records) + 1) for p in records]
    prompts = prompts[: args.prompts]
    ids = [hf.prompt_ids(hf.render(prompt)) for prompt in prompts]
    greedy = DecodingParams(max_new_tokens=args.new_tokens, temperature=0.0)
    hf.generate(prompts[:1], greedy, [None])  # model load, not timed

    gguf = find_package_file(str(configured["gguf_package"]), str(configured["gguf_file"]))
    # generation keeps the last position's logits only; teacher-forcing keeps every position's
    cpp = Llama(model_path=str(gguf), n_ctx=2048, n_threads=args.threads, verbose=False)
    cpp_all = Llama(model_path=str(gguf), n_ctx=2048, n_threads=args.threads, logits_all=True, verbose=False)
    stops = {int(t) for t in (cpp.token_eos(), *hf.stop_ids()) if t is not None}
    llamacpp_greedy(cpp, ids[0], 2, stops)  # warm-up, not timed
    llamacpp_logprobs(cpp_all, ids[0], ids[0][:2])

    ours, t_hf_generate = timed(lambda: hf.generate(prompts, greedy, [None] * len(prompts)))
    hf_texts = [[int(i) for i in hf.tokenizer(o.text, add_special_tokens=False)["input_ids"]] for o in ours]
    theirs, t_cpp_generate = timed(lambda: [llamacpp_greedy(cpp, prompt, args.new_tokens, stops) for prompt in ids])
    same = sum(hf.tokenizer.decode(t) == o.text for t, o in zip(theirs, ours, strict=True))

    texts = [o.text for o in ours]
    scored, t_hf_score = timed(lambda: hf.score(prompts, texts))
    forced, t_cpp_score = timed(
        lambda: [llamacpp_logprobs(cpp_all, prompt, text) for prompt, text in zip(ids, hf_texts, strict=True)]
    )
    comparable = [(s, f) for s, f in zip(scored, forced, strict=True) if len(s) == len(f)]
    moved = max(float(np.abs(np.array([t.logprob for t in s]) - f).max()) for s, f in comparable if len(s))

    generated_hf = sum(len(o.tokens) for o in ours)
    generated_cpp = sum(len(t) for t in theirs)
    forced_tokens = sum(len(s) for s in scored)
    hf_gen_rate, hf_score_rate = generated_hf / t_hf_generate, forced_tokens / t_hf_score
    rows = [
        BenchRow("hf_generate", f"hf backend, greedy generation, batches of {hf.config.batch_size}",
                 round(hf_gen_rate, 1), "tokens/s", 1.0),
        BenchRow("llamacpp_generate", "llama.cpp (llama-cpp-python), greedy generation, one prompt at a time",
                 round(generated_cpp / t_cpp_generate, 1), "tokens/s",
                 round(generated_cpp / t_cpp_generate / hf_gen_rate, 2)),
        BenchRow("hf_score", f"hf backend, teacher-forced log-probabilities, batches of {hf.config.batch_size}",
                 round(hf_score_rate, 1), "tokens/s", 1.0),
        BenchRow("llamacpp_score", "llama.cpp, teacher-forced log-probabilities (every position's logits)",
                 round(forced_tokens / t_cpp_score, 1), "tokens/s",
                 round(forced_tokens / t_cpp_score / hf_score_rate, 2)),
    ]  # fmt: skip
    print_rows(rows)
    print(f"greedy texts identical: {same} of {len(prompts)}; largest log-probability difference {moved:.3g}")
    setup = {
        "model": str(configured["name"]),
        "gguf": gguf.name,
        "prompts": len(prompts),
        "new_tokens": args.new_tokens,
        "greedy_texts_identical": f"{same} of {len(prompts)}",
        "max_abs_logprob_difference": float(f"{moved:.3g}"),
    }
    record("llm_floor", rows, setup, threads=args.threads)


if __name__ == "__main__":
    main()
