"""Benchmark: the estimators that read the samples' NLI pair matrix side by side with
lm-polygraph 0.7.0's, same records, same NLI model, same machine, one run: the similarity-graph
estimators of Lin, Trivedi and Sun (2023), Kernel Language Entropy (Nikitin et al., 2024) and
LUQ's response reading (Zhang et al., 2024, as lm-polygraph ships it).

The reference is lm-polygraph's ``SemanticMatrixCalculator`` (its NLI matrices over each record's
unique samples) followed by its ``NumSemSets``, ``EigValLaplacian``, ``DegMat``,
``Eccentricity``, ``KernelLanguageEntropy`` and ``LUQ`` at their defaults (NLI entailment
similarity). hallulab's default path is the ``nli_pair_matrix`` artifact's request through the
``NLIScorer`` and its call cache, then each method's aggregate step at its defaults. ``cold``:
the call cache empty; ``warm``: a sweep point (another N: the pair matrix is read back, so only
the estimators' arithmetic runs). The pair matrix is the shared cost on both sides (each side
computes it once for all six estimators): a method's own row charges it the matrix plus its own
estimator, timed apart. The
project's default NLI model runs on both sides; the largest difference of the scores comes from
the NLI model's float32 batching (the pairs are batched differently on the two sides), not from
the estimators, which the parity tests hold equal on the same NLI outputs.

Usage:

    python perf/bench_graph_uq.py [--threads 2] [--questions 40]
"""

from __future__ import annotations

import argparse
import importlib
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hallulab.artifacts.nli_pair_matrix.build import pair_matrices_of
from hallulab.core.call_cache import CallCache
from hallulab.core.config import compose, dataset_config, typed
from hallulab.data.loaders import load_dataset
from hallulab.data.schema import Record
from hallulab.methods.sample_scores import SampleMatrices, SampleMatrixScores
from hallulab.nli.scorer import NLIKnobs, NLIScorer
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
    "kernel_language_entropy": "kle_heat",
    "luq": "luq_response",
}
#: lm-polygraph's estimator for each method, at its default arguments
REFERENCE_CLASSES = {
    "num_sem_sets": "NumSemSets",
    "eig_val_laplacian": "EigValLaplacian",
    "deg_mat": "DegMat",
    "eccentricity": "Eccentricity",
    "kernel_language_entropy": "KernelLanguageEntropy",
    "luq": "LUQ",
}
#: a method's reading that needs more than the pair matrix, switched off (LUQ's sentence reading
#: reads the score stage's sentence x sample matrices, which lm-polygraph has no counterpart of)
ONLY_MATRIX_READINGS = {"luq": {"readings": ["response"]}}


Timed = tuple[dict[str, np.ndarray], float, dict[str, float]]


def reference_scores(records: list[Record], nli: Any) -> Timed:
    """lm-polygraph's semantic matrices, then each of its estimators at its defaults: the scores,
    the matrix's seconds and each estimator's seconds."""
    import lm_polygraph.estimators as estimators
    from lm_polygraph.stat_calculators.semantic_matrix import SemanticMatrixCalculator

    stats: dict[str, Any] = {"sample_texts": [list(p.samples) for p in records]}
    matrices, t_matrix = timed(lambda: SemanticMatrixCalculator(nli)(stats, texts=[], model=None))
    stats |= matrices
    scores, seconds = {}, {}
    for name, class_name in REFERENCE_CLASSES.items():
        estimator = getattr(estimators, class_name)()
        found, seconds[name] = timed(partial(estimator, stats))
        scores[name] = np.asarray(found, dtype=np.float64)
    return scores, t_matrix, seconds


def our_scores(records: list[Record], scorer: NLIScorer, overrides: list[str]) -> Timed:
    """The artifact's pair matrices through the cached scorer, then each method's aggregate step:
    the scores, the matrices' seconds and each step's seconds."""
    matrices, t_matrix = timed(lambda: pair_matrices_of(records, scorer.class_probs))
    artifact = {"records": {rid: matrix.to_dict() for rid, matrix in matrices.items()}}
    params = compose(overrides)
    no_sentences = SampleMatrixScores((SampleMatrices("luq", "luq_sentence", {}, {}),))
    scores, seconds = {}, {}
    for name, variant in METHODS.items():
        spec = method(name)
        readings = ONLY_MATRIX_READINGS.get(name)
        knobs = params | {name: {**params[name], **readings}} if readings else params
        view = ParamsView(knobs, spec.aggregate.param_keys(), f"aggregate_{name}")
        context = AggregateContext("bench", records, {"nli_pair_matrix": artifact}, no_sentences, view)
        step = importlib.import_module(f"hallulab.methods.{name}.aggregate").aggregate
        result, seconds[name] = timed(partial(step, context))
        frame = result.scores[result.scores["variant"] == variant].set_index("record_id")
        scores[name] = frame.loc[[p.id for p in records], "score"].to_numpy(dtype=np.float64)
    return scores, t_matrix, seconds


def method_rows(name: str, units: int, reference: Timed, cold: Timed, warm: Timed) -> list[BenchRow]:
    """One method's reference, cold and warm rows: the shared matrix's seconds plus its own."""
    unit = "responses/s"
    t_reference = reference[1] + reference[2][name]
    t_cold, t_warm = cold[1] + cold[2][name], warm[1] + warm[2][name]
    reference_class = REFERENCE_CLASSES[name]
    return [
        BenchRow(
            f"{name}_reference",
            f"lm-polygraph 0.7.0 SemanticMatrixCalculator + {reference_class}",
            round(units / t_reference, 1),
            unit,
            1.0,
        ),
        BenchRow(
            f"{name}_cold",
            f"hallulab nli_pair_matrix + {name}'s aggregate step ({METHODS[name]}), empty call cache",
            round(units / t_cold, 1),
            unit,
            round(t_reference / t_cold, 2),
        ),
        BenchRow(
            f"{name}_warm",
            f"hallulab {name}, a sweep point (samples.used=5, the pair matrix from the call cache)",
            round(units / t_warm, 1),
            unit,
            round(t_reference / t_warm, 1),
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--questions", type=int, default=40, help="NQ-open questions (10 samples each)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    records = load_dataset({**dataset_config("nq_open"), "limit": args.questions})[0]
    config = typed(NLIKnobs, compose(["dataset=nq_open"])["nli"], "nli")
    nli = polygraph_nli(config.model, config.batch_size)
    reference_scores(records[:1], nli)  # model warm-up, not timed
    reference = reference_scores(records, nli)
    with tempfile.TemporaryDirectory() as folder, CallCache(Path(folder) / "calls.sqlite") as cache:
        scorer = NLIScorer(config, cache=cache)
        scorer.identity  # noqa: B018 - load the model outside the timed region, as the reference did
        cold = our_scores(records, scorer, ["dataset=nq_open"])
        warm = our_scores(records, scorer, ["dataset=nq_open", "samples.used=5"])
    worst = {name: float(np.abs(cold[0][name] - reference[0][name]).max()) for name in METHODS}
    units, unit = len(records), "responses/s"
    graph = ("num_sem_sets", "eig_val_laplacian", "deg_mat", "eccentricity")
    t_reference = reference[1] + sum(reference[2][name] for name in graph)
    t_cold = cold[1] + sum(cold[2][name] for name in graph)
    t_warm = warm[1] + sum(warm[2][name] for name in graph)
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
        *(row for name in METHODS for row in method_rows(name, units, reference, cold, warm)),
    ]
    print_rows(rows)
    for name, difference in worst.items():
        print(f"{name}: largest |difference| of scores against the reference {difference:.2e}")
    setup = {
        "dataset": "nq_open",
        "responses": units,
        "samples": len(records[0].samples),
        "nli": config.name,
        "max_abs_difference": float(f"{max(worst.values()):.2e}"),
        "max_abs_difference_by_method": {name: float(f"{value:.2e}") for name, value in worst.items()},
    }
    record("graph_uq", rows, setup, threads=args.threads)


if __name__ == "__main__":
    main()
