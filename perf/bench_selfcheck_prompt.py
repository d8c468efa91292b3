"""Benchmark: SelfCheckGPT-Prompt side by side with selfcheckgpt 0.1.7's ``SelfCheckLLMPrompt``,
same WikiBio sentences and samples, same model, same machine, one run.

The evaluator LLM reads each (sample, sentence) pair in the released wording and answers Yes or
No in at most 5 greedy tokens (Manakul et al., 2023, §5.5). Both sides use the embedded
SmolLM2-135M on the raw prompt (the reference applies no chat template, so hallulab's is turned
off here for the comparison: the same tokens in, the same verdicts out):

  reference - ``SelfCheckLLMPrompt.predict`` per passage (one ``generate`` per pair), on the
              very model and tokenizer objects the ``hf`` backend loaded (its constructor loads a
              hub name; the bench sets the attributes that constructor sets instead);
  cold      - :func:`hallulab.methods.selfcheck_prompt.prompting.record_matrices` through an
              empty call cache (every distinct prompt of the data set in one request, length-
              sorted batches, the opening that prompts share encoded once);
  warm      - the same request from the call cache (an N sweep point).

Sentences per second, and the largest difference between the two sides' sentence scores
(S_Prompt(i), the mean verdict over samples). Usage:

    python perf/bench_selfcheck_prompt.py [--passages 2] [--samples 5] [--threads 2]
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import fields, replace
from functools import partial
from pathlib import Path

import numpy as np
import torch

from hallulab.core.call_cache import CallCache
from hallulab.core.config import compose, dataset_config, typed
from hallulab.data.loaders import load_dataset
from hallulab.data.schema import Record
from hallulab.llm import build_llm
from hallulab.llm.base import DecodingParams
from hallulab.llm.cached import CachedLLM
from hallulab.llm.hf import HFLLM
from hallulab.llm.prompts import load_prompt
from hallulab.methods.selfcheck_prompt.knobs import SelfCheckPromptKnobs
from hallulab.methods.selfcheck_prompt.prompting import PromptMatrices, record_matrices
from hallulab.tooling.bench_record import print_rows, rate_rows, record, timed


def reference_scores(checker: object, records: list[Record]) -> list[np.ndarray]:
    """selfcheckgpt's sentence scores, passage by passage, as its README calls ``predict``."""
    return [np.asarray(checker.predict(list(p.sentences), list(p.samples))) for p in records]  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=2, help="WikiBio passages")
    parser.add_argument("--samples", type=int, default=5, help="samples per passage")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    params = compose(["dataset=wikibio"])
    configured = params["llm_catalogue"][params["llms"]["evaluator"]]
    llm = build_llm({**configured, "num_threads": args.threads, "chat_template": False})
    assert isinstance(llm, HFLLM), "the bench compares the hf backend with the transformers model it loads"
    config = typed(
        SelfCheckPromptKnobs,
        {f.name: params["selfcheck_prompt"][f.name] for f in fields(SelfCheckPromptKnobs)},
        "selfcheck_prompt",
    )
    template = load_prompt(config.prompt)
    records = [
        replace(p, samples=p.samples[: args.samples])
        for p in load_dataset(dataset_config("wikibio"))[0][: args.passages]
    ]
    sentences = sum(len(p.sentences) for p in records)

    from selfcheckgpt.modeling_selfcheck import SelfCheckLLMPrompt

    checker = SelfCheckLLMPrompt.__new__(SelfCheckLLMPrompt)
    checker.tokenizer, checker.model, checker.device = llm.tokenizer, llm.model, torch.device("cpu")
    checker.text_mapping, checker.not_defined_text = {"yes": 0.0, "no": 1.0, "n/a": 0.5}, set()
    checker.set_prompt_template(template.human)
    checker.predict(list(records[0].sentences[:1]), list(records[0].samples[:1]))  # first-call set-up, not timed
    theirs, reference_seconds = timed(partial(reference_scores, checker, records))
    llm.generate([template.messages(context="warm-up", sentence="warm-up")], DecodingParams(max_new_tokens=1), [None])

    with tempfile.TemporaryDirectory() as folder, CallCache(Path(folder) / "calls.sqlite") as cache:
        cached = CachedLLM(llm, cache)
        found, cold_seconds = timed(partial(record_matrices, records, cached, config, template))
        _, warm_seconds = timed(partial(record_matrices, records, cached, config, template))
    ours = sentence_means(found, records)
    difference = max(float(np.abs(a - b).max()) for a, b in zip(theirs, ours, strict=True))

    rows = rate_rows(
        "prompt",
        "sentences/s",
        sentences,
        {
            "reference": (
                "selfcheckgpt 0.1.7 SelfCheckLLMPrompt (one generate per sentence-sample pair)",
                reference_seconds,
            ),
            "cold": (
                "hallulab default path (one batched request, shared openings encoded once), empty call cache",
                cold_seconds,
            ),
            "warm": ("hallulab, a sweep point (the same verdicts from the call cache)", warm_seconds),
        },
        digits=3,
    )
    print_rows(rows)
    print(f"largest |difference| of sentence scores: {difference:.3g}; verdicts {found.counts.as_dict()}")
    setup = {
        "dataset": "wikibio",
        "passages": len(records),
        "sentences": sentences,
        "samples": args.samples,
        "pairs": sentences * args.samples,
        "llm": configured["name"],
        "chat_template": False,
        "max_new_tokens": config.max_new_tokens,
        "max_abs_difference": float(f"{difference:.3g}"),
    }
    record("selfcheck_prompt", rows, setup, threads=args.threads)


def sentence_means(found: PromptMatrices, records: list[Record]) -> list[np.ndarray]:
    """S_Prompt(i): each passage's verdict matrix averaged over its samples."""
    return [np.asarray(found.verdicts[p.id]).mean(axis=1) for p in records]


if __name__ == "__main__":
    main()
