"""Benchmark: the similarity-graph estimators of Lin, Trivedi and Sun (2023) side by side with
lm-polygraph 0.7.0's, same records, same NLI model, same machine, one run.

The reference is lm-polygraph's ``SemanticMatrixCalculator`` (its NLI matrices over each record's
unique samples) followed by its ``NumSemSets``, ``EigValLaplacian``, ``DegMat`` and
``Eccentricity`` at their defaults (NLI entailment similarity). hallulab's default path is the
``nli_pair_matrix`` artifact's request through the ``NLIScorer`` and its call cache, then the four
methods' aggregate steps at their defaults. ``cold``: the call cache empty; ``warm``: a sweep
point (another N: the pair matrix is read back, so only the estimators' arithmetic runs). The
project's default NLI model runs on both sides; the largest difference of the scores comes from
the NLI model's float32 batching (the pairs are batched differently on the two sides), not from
the estimators, which the parity tests hold equal on the same NLI outputs.

Usage:

    python benchmarks/bench_graph_uq.py [--threads 2] [--questions 40]
"""

from __future__ import annotations

import argparse
import importlib
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hallulab.artifacts.nli_pair_matrix.build import pair_matrices_of
from hallulab.core.call_cache import CallCache
from hallulab.core.config import compose, dataset_config, typed
from hallulab.data.loaders import load_dataset
from hallulab.data.schema import Passage
from hallulab.nli.scorer import NLIConfig, NLIScorer
from hallulab.pipeline.context import AggregateContext
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.registry import method
from hallulab.tooling.bench_record import BenchRow, print_rows, record, timed
from hallulab.tooling.polygraph import polygraph_nli

#: each method and the variant that is its default reading (lm-polygraph's default arguments)
METHODS = {
    "num_sem_sets": "num_sem_sets",
    "eig_val_laplacian": "eigv_entail",
    "deg_mat": "degmat_entail",
    "eccentricity": "ecc_entail",
}


def reference_scores(passages: list[Passage], nli: Any) -> dict[str, np.ndarray]:
    """lm-polygraph's semantic matrices, then each of its four estimators at its defaults."""
    from lm_polygraph.estimators import DegMat, Eccentricity, EigValLaplacian, NumSemSets
    from lm_polygraph.stat_calculators.semantic_matrix import SemanticMatrixCalculator

    stats: dict[str, Any] = {"sample_texts": [list(p.samples) for p in passages]}
    stats |= SemanticMatrixCalculator(nli)(stats, texts=[], model=None)
    estimators = {
        "num_sem_sets": NumSemSets(),
        "eig_val_laplacian": EigValLaplacian(),
        "deg_mat": DegMat(),
        "eccentricity": Eccentricity(),
    }
    return {name: np.asarray(estimator(stats), dtype=np.float64) for name, estimator in estimators.items()}


def our_scores(passages: list[Passage], scorer: NLIScorer, overrides: list[str]) -> dict[str, np.ndarray]:
    """The artifact's pair matrices through the cached scorer, then each method's aggregate step."""
    matrices = pair_matrices_of(passages, scorer.class_probs)
    artifact = {"records": {rid: matrix.to_dict() for rid, matrix in matrices.items()}}
    params = compose(overrides)
    found = {}
    for name, variant in METHODS.items():
        spec = method(name)
        view = ParamsView(params, spec.aggregate.param_keys(), f"aggregate_{name}")
        context: AggregateContext[None] = AggregateContext("bench", passages, {"nli_pair_matrix": artifact}, None, view)
        frame = importlib.import_module(f"hallulab.methods.{name}.aggregate").aggregate(context).scores
        frame = frame[frame["variant"] == variant].set_index("record_id")
        found[name] = frame.loc[[p.id for p in passages], "score"].to_numpy(dtype=np.float64)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--questions", type=int, default=40, help="NQ-open questions (10 samples each)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    passages = load_dataset({**dataset_config("nq_open"), "limit": args.questions})[0]
    config = typed(NLIConfig, compose(["dataset=nq_open"])["nli"], "nli")
    nli = polygraph_nli(config.model, config.batch_size)
    reference_scores(passages[:1], nli)  # model warm-up, not timed
    theirs, t_reference = timed(lambda: reference_scores(passages, nli))
    with tempfile.TemporaryDirectory() as folder, CallCache(Path(folder) / "calls.sqlite") as cache:
        scorer = NLIScorer(config, cache=cache)
        scorer.identity  # noqa: B018 - load the model outside the timed region, as the reference did
        mine, t_cold = timed(lambda: our_scores(passages, scorer, ["dataset=nq_open"]))
        _, t_warm = timed(lambda: our_scores(passages, scorer, ["dataset=nq_open", "samples.used=5"]))
    worst = max(float(np.abs(mine[name] - theirs[name]).max()) for name in METHODS)
    units, unit = len(passages), "responses/s"
    rows = [
        BenchRow(
            "graph_uq_reference",
            "lm-polygraph 0.7.0 SemanticMatrixCalculator + NumSemSets, EigValLaplacian, DegMat, Eccentricity",
            round(units / t_reference, 1),
            unit,
            1.0,
        ),
        BenchRow(
            "graph_uq_cold",
            "hallulab default path (nli_pair_matrix + the four aggregate steps), empty call cache",
            round(units / t_cold, 1),
            unit,
            round(t_reference / t_cold, 2),
        ),
        BenchRow(
            "graph_uq_warm",
            "hallulab, a sweep point (samples.used=5, the pair matrix from the call cache)",
            round(units / t_warm, 1),
            unit,
            round(t_reference / t_warm, 1),
        ),
    ]
    print_rows(rows)
    print(f"largest |difference| of scores against the reference {worst:.2e}")
    setup = {
        "dataset": "nq_open",
        "responses": units,
        "samples": len(passages[0].samples),
        "nli": config.name,
        "max_abs_difference": float(f"{worst:.2e}"),
    }
    record("graph_uq", rows, setup, threads=args.threads)


if __name__ == "__main__":
    main()
