"""Benchmark: SAR (Duan et al., 2024) and CoCoA (Vashurin et al., 2025) side by side with
lm-polygraph 0.7.0's estimators of those names, same records, same similarity model, same
machine, one run.

The reference is lm-polygraph's ``CrossEncoderSimilarityMatrixCalculator`` (the samples' matrix
over their unique texts, and each token's similarity with the token removed, for every sample
and for the response) followed by its ``SAR``, ``SentenceSAR`` and ``TokenSAR``; and its
``GreedyCrossEncoderSimilarityMatrixCalculator`` (the response against each unique sample, both
orders) followed by ``CocoaMSP``, ``CocoaPPL`` and ``CocoaMTE``, each at its defaults (its batch
of 10 pairs). hallulab's default path is each method's score step (every pair of the data set
in one request through the call cache, a batch's distinct texts encoded once) and its aggregate
step at its defaults.

Both sides score with the project's offline similarity, the packaged all-MiniLM-L6-v2's clipped
cosine: the reference's cross-encoder is that function, called on each batch the calculator
sends (``ReferenceSimilarity``). The log-probabilities and entropies both sides read are
SmolLM2's, teacher-forced once after the question (the proxy's request) and given to both: they
are the shared input, not timed. lm-polygraph cuts a token by decoding the other token ids,
hallulab by the token's character offsets; the two texts agree on this tokenizer, so the largest
difference of the scores comes from the encoder's float32 batching.

``cold``: the call cache empty; ``warm``: a sweep point (another N: the aggregate step reads the
stored similarities, as ``dvc exp run -S samples.used=5`` re-runs only it).

Usage:

    python perf/bench_sar_cocoa.py [--threads 2] [--questions 20]

SAR asks for one similarity per token of every sample (the token removed in turn), so its pairs
far outnumber the questions: the default count keeps a run of both sides short.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch

from hallulab.core.call_cache import CallCache
from hallulab.core.config import compose, dataset_config, typed
from hallulab.core.token_stats import TokenStats
from hallulab.data.loaders import load_dataset
from hallulab.data.schema import Record
from hallulab.llm import build_llm
from hallulab.llm.hf import HFLLM
from hallulab.methods.cocoa.aggregate import aggregate as cocoa_aggregate
from hallulab.methods.cocoa.raw import CocoaScores
from hallulab.methods.cocoa.score import response_similarities
from hallulab.methods.sar.aggregate import aggregate as sar_aggregate
from hallulab.methods.sar.raw import SarScores
from hallulab.methods.sar.score import sar_records
from hallulab.methods.sentence_similarity import SentenceSimilarity, SentenceSimilarityKnobs
from hallulab.pipeline.context import AggregateContext
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.registry import method
from hallulab.tooling.bench_record import BenchRow, print_rows, rate_rows, record, timed

#: each method's readings and lm-polygraph's estimator of each (default arguments)
REFERENCE_CLASSES = {
    "sar": {"sar": "SAR", "sentence_sar": "SentenceSAR", "token_sar": "TokenSAR"},
    "cocoa": {"cocoa_msp": "CocoaMSP", "cocoa_ppl": "CocoaPPL", "cocoa_mte": "CocoaMTE"},
}
#: the calculator that computes each method's similarities in lm-polygraph
CALCULATORS = {
    "sar": "CrossEncoderSimilarityMatrixCalculator (samples' matrix, token relevances)",
    "cocoa": "GreedyCrossEncoderSimilarityMatrixCalculator (response against samples)",
}

Scores = dict[str, np.ndarray]
#: a side's scores, the seconds of its similarities and the seconds of its estimators
Timed = tuple[Scores, float, float]


class ReferenceSimilarity:
    """What lm-polygraph's calculators call as their cross-encoder: ``predict`` of a list of
    pairs, batch by batch, here the project's offline similarity with no call cache."""

    def __init__(self, similarity: SentenceSimilarity) -> None:
        self.similarity = similarity

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 10) -> np.ndarray:
        values = [
            self.similarity.scores([a for a, _ in chunk], [b for _, b in chunk])
            for chunk in (pairs[i : i + batch_size] for i in range(0, len(pairs), batch_size))
        ]
        return np.concatenate(values) if values else np.zeros(0)


def shared_tokens(
    llm: HFLLM, records: list[Record]
) -> tuple[dict[str, list[list[TokenStats]]], dict[str, list[TokenStats]]]:
    """Each sample's and each response's token statistics, teacher-forced after the question."""
    texts = [s for p in records for s in p.samples] + [p.response or "" for p in records]
    prefixes = [p.prompt or "" for p in records for _ in p.samples] + [p.prompt or "" for p in records]
    scored = llm.score(prefixes, texts)
    samples, at = {}, 0
    for one in records:
        samples[one.id] = scored[at : at + len(one.samples)]
        at += len(one.samples)
    responses = {p.id: scored[at + i] for i, p in enumerate(records)}
    return samples, responses


def _calculator(name: str, similarity: SentenceSimilarity) -> Any:
    from lm_polygraph.stat_calculators.cross_encoder_similarity import CrossEncoderSimilarityMatrixCalculator
    from lm_polygraph.stat_calculators.greedy_cross_encoder_similarity import (
        GreedyCrossEncoderSimilarityMatrixCalculator,
    )

    cls = CrossEncoderSimilarityMatrixCalculator if name == "sar" else GreedyCrossEncoderSimilarityMatrixCalculator
    calculator = cls()
    calculator.crossencoder = ReferenceSimilarity(similarity)
    calculator.crossencoder_setup = True
    return calculator


def reference_scores(
    name: str,
    records: list[Record],
    samples: dict[str, list[list[TokenStats]]],
    responses: dict[str, list[TokenStats]],
    similarity: SentenceSimilarity,
    tokenizer: Any,
) -> Timed:
    """lm-polygraph's calculator, then its estimators: the scores and the two parts' seconds."""
    import lm_polygraph.estimators as estimators

    stats: dict[str, Any] = {
        "input_texts": [p.prompt for p in records],
        "sample_texts": [list(p.samples) for p in records],
        "greedy_texts": [p.response for p in records],
        "sample_tokens": [[[t.token_id for t in stats] for stats in samples[p.id]] for p in records],
        "greedy_tokens": [[t.token_id for t in responses[p.id]] for p in records],
        "sample_log_likelihoods": [[[t.logprob for t in stats] for stats in samples[p.id]] for p in records],
        "greedy_log_likelihoods": [[t.logprob for t in responses[p.id]] for p in records],
        "entropy": [[t.entropy for t in responses[p.id]] for p in records],
    }
    stats["sample_log_probs"] = [[sum(lls) for lls in record] for record in stats["sample_log_likelihoods"]]
    model = SimpleNamespace(device=lambda: "cpu", tokenizer=tokenizer)
    found, t_similarity = timed(lambda: _calculator(name, similarity)(stats, texts=[], model=model))
    stats |= found
    scores: Scores = {}
    t_estimators = 0.0
    for variant, class_name in REFERENCE_CLASSES[name].items():
        values, seconds = timed(partial(getattr(estimators, class_name)(), stats))
        scores[variant] = np.asarray(values, dtype=np.float64)
        t_estimators += seconds
    return scores, t_similarity, t_estimators


def _aggregate(name: str, records: list[Record], artifacts: dict[str, Any], raw: Any, overrides: list[str]) -> Any:
    spec = method(name)
    view = ParamsView(compose(overrides), spec.aggregate.param_keys(), f"aggregate_{name}")
    step = sar_aggregate if name == "sar" else cocoa_aggregate
    return step(AggregateContext("bench", records, artifacts, raw, view))


def our_scores(
    name: str,
    records: list[Record],
    samples: dict[str, list[list[TokenStats]]],
    responses: dict[str, list[TokenStats]],
    similarity: Callable[[Sequence[str], Sequence[str]], np.ndarray],
    overrides: list[str],
    raw: Any = None,
) -> tuple[Timed, Any]:
    """The score step's similarity request (skipped when ``raw`` is given: a sweep point reads
    the stored one), then the aggregate step: the scores, both parts' seconds, and the raw."""
    t_similarity = 0.0
    if raw is None and name == "sar":
        (by_record, _), t_similarity = timed(
            lambda: sar_records(records, samples, responses, similarity, token_relevance=True)
        )
        raw = SarScores(
            proxy={}, similarity={}, prefix="{prompt}", token_relevance=True, records=by_record, diagnostics={}
        )
    elif raw is None:
        found, t_similarity = timed(lambda: response_similarities(records, similarity))
        raw = CocoaScores(similarity={}, records=found, diagnostics={})
    tokens = {p.id: [t.to_dict() for t in responses[p.id]] for p in records}
    artifacts = {"response_tokens": {"tokens": tokens, "sources": {p.id: "proxy" for p in records}, "llm": {}}}
    result, t_aggregate = timed(lambda: _aggregate(name, records, artifacts, raw, overrides))
    frame = result.scores
    scores = {}
    for variant in REFERENCE_CLASSES[name]:
        chosen = frame[frame["variant"] == variant].set_index("record_id")
        scores[variant] = chosen.loc[[p.id for p in records], "score"].to_numpy(dtype=np.float64)
    return (scores, t_similarity, t_aggregate), raw


def method_rows(name: str, units: int, reference: Timed, cold: Timed, warm: Timed) -> list[BenchRow]:
    """The reference's, the cold and the warm rows of one method, each side's seconds its
    similarities' plus its estimators'."""
    classes = ", ".join(REFERENCE_CLASSES[name].values())
    sides = {
        "reference": (f"lm-polygraph 0.7.0 {CALCULATORS[name]} + {classes}", reference),
        "cold": (f"hallulab {name}'s score step's similarities + its aggregate step, empty call cache", cold),
        "warm": (
            f"hallulab {name}, a sweep point (samples.used=5: the aggregate step on the stored similarities)",
            warm,
        ),
    }
    return rate_rows(name, "responses/s", units, {k: (label, sum(side[1:])) for k, (label, side) in sides.items()}, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--questions", type=int, default=20, help="NQ-open questions (10 samples each)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    loaded = load_dataset({**dataset_config("nq_open"), "limit": args.questions})[0]
    records = [p for p in loaded if p.response and len(p.samples) == len(loaded[0].samples)]
    params = compose(["dataset=nq_open"])
    llm = build_llm(params["llm_catalogue"]["smollm2"], "smollm2")
    assert isinstance(llm, HFLLM)
    samples, responses = shared_tokens(llm, records)
    config = typed(SentenceSimilarityKnobs, params["sentence_similarity"], "sentence_similarity")
    uncached = SentenceSimilarity(config)
    uncached.scores(["warm-up"], ["the model is loaded outside the timed region"])
    rows: list[BenchRow] = []
    worst: dict[str, float] = {}
    units = len(records)
    with tempfile.TemporaryDirectory() as folder, CallCache(Path(folder) / "calls.sqlite") as cache:
        cached = SentenceSimilarity(config, cache=cache)
        cached.model = uncached.model  # the same loaded encoder (a cached_property's value)
        cached.identity  # noqa: B018 - the weights' digest, outside the timed region
        for name in REFERENCE_CLASSES:
            reference = reference_scores(name, records, samples, responses, uncached, llm.tokenizer)
            cold, raw = our_scores(name, records, samples, responses, cached.scores, ["dataset=nq_open"])
            warm, _ = our_scores(
                name, records, samples, responses, cached.scores, ["dataset=nq_open", "samples.used=5"], raw
            )
            rows.extend(method_rows(name, units, reference, cold, warm))
            for variant in REFERENCE_CLASSES[name]:
                worst[variant] = float(np.abs(cold[0][variant] - reference[0][variant]).max())
    print_rows(rows)
    for variant, difference in worst.items():
        print(f"{variant}: largest |difference| of scores against the reference {difference:.2e}")
    setup = {
        "dataset": "nq_open",
        "responses": units,
        "samples": len(records[0].samples),
        "similarity": config.name,
        "log_probabilities": "SmolLM2-135M-Instruct, teacher-forced after the question (shared, not timed)",
        "max_abs_difference": float(f"{max(worst.values()):.2e}"),
        "max_abs_difference_by_variant": {name: float(f"{value:.2e}") for name, value in worst.items()},
    }
    record("sar_cocoa", rows, setup, threads=args.threads)


if __name__ == "__main__":
    main()
