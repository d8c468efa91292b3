"""Full-set check: CCP on FactualBio with the NLI scorer's fast CPU path against float32.

Issue 21 §3 asks for an NLI path on the CPU with at least 3x the float32 pairs/s that moves
CCP's ROC-AUC on FactualBio (claim level, the CCP paper's Table 2 protocol) by at most half
a point. The path is ``nli.dtype: bfloat16`` with ``nli.compile: true`` (see
``check_nli_bfloat16.py`` for SelfCheck-NLI on WikiBio) and, as configured,
``nli.recheck_margin``: CCP reads only each pair's argmax class, which bfloat16 rounding flips
where two classes are nearly tied, so those near-ties are re-scored in float32. Two parts:

- **metrics**: the published FactualBio CCP results, float32 (``results/factualbio/ccp.json``),
  the fast path as configured (``ccp_bf16_compiled.json``) and the fast path without the
  recheck (``ccp_bf16_compiled_norecheck.json``, ``-S nli.recheck_margin=0``), each written
  by ``make result`` (their ``command``). They must share every parameter but ``nli.dtype``,
  ``nli.compile`` and ``nli.recheck_margin`` and the same NLI weights, so the change of each
  variant's claim ROC-AUC, PR-AUC and PRR is paired on the same claims; the check stops if
  they do not.
- **speed**: CCP's NLI pairs (every context the results scored) built from the FactualBio
  artifacts in the workspace (a ``dvc exp run -S dataset=factualbio`` leaves them there),
  scored cold by each path in one process, float32 first, then the configured fast path
  compiled from nothing (an empty Inductor cache and a fresh temporary root, compiling inside
  the timed region), then the one without the recheck (an empty Inductor cache), with the
  largest change of a class probability, the pairs whose class changes and the near-ties
  re-scored. CCP's pairs are a word with its claim or sentence
  prefix, a few to a few dozen tokens: tokenising and per-batch work weigh more than on
  SelfCheck-NLI's passage-length pairs, so the ratio is CCP's own.

Records the section ``ccp_bfloat16`` of ``perf/results.json``. Usage:

    python perf/check_ccp_bfloat16.py [--threads 2] [--skip-speed]
"""

from __future__ import annotations

import argparse
import importlib
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from check_nli_bfloat16 import cold_temporary_root, timed_in_empty_inductor_cache

from hallulab.nli.scorer import NLIKnobs, NLIScorer
from hallulab.results.published import RESULTS_DIR, PublishedResult, load_result
from hallulab.tooling.bench_record import BenchRow, record

DATASET = "factualbio"
FLOAT32_RESULT = Path(RESULTS_DIR) / DATASET / "ccp.json"
#: the parameters the results may differ in: the path under test (``recheck_margin`` acts
#: only in reduced precision, and the float32 result may predate it)
PATH_KNOBS = ("dtype", "compile", "recheck_margin")
#: the variants compared: the paper's CCP in each NLI context (K = 10, words)
VARIANTS = ("ccp_k10_claimpref", "ccp_k10_nocontext", "ccp_k10_sentpref")
METRICS = ("claim_roc_auc", "claim_pr_auc", "claim_prr")


@dataclass(frozen=True)
class FastPath:
    """One published fast-path result: bfloat16 + compile, with or without the recheck."""

    key: str
    label: str
    rechecks: bool

    @property
    def result(self) -> Path:
        return Path(RESULTS_DIR) / DATASET / f"ccp_{self.key}.json"


FAST_PATHS = (
    FastPath("bf16_compiled", "bfloat16 + nli.compile (near-ties re-scored in float32)", rechecks=True),
    FastPath("bf16_compiled_norecheck", "bfloat16 + nli.compile, nli.recheck_margin=0", rechecks=False),
)


@dataclass(frozen=True)
class MetricChange:
    """One variant's claim-level metric under float32 and a fast path, in percent."""

    variant: str
    metric: str
    float32: float
    fast: float

    @property
    def change(self) -> float:
        return self.fast - self.float32


def comparable(float32: PublishedResult, fast: PublishedResult, path: FastPath) -> None:
    """Stop unless ``fast`` differs from ``float32`` only in the path's knobs, on the same NLI weights."""
    base = {k: v for k, v in float32.params.items() if k != "nli"}
    other = {k: v for k, v in fast.params.items() if k != "nli"}
    if base != other:
        differing = sorted(k for k in base.keys() | other.keys() if base.get(k) != other.get(k))
        raise SystemExit(f"{path.result}: params differ from {FLOAT32_RESULT} beyond nli ({differing})")
    base_nli = {k: v for k, v in float32.params["nli"].items() if k not in PATH_KNOBS}
    fast_nli = {k: v for k, v in fast.params["nli"].items() if k not in PATH_KNOBS}
    if base_nli != fast_nli:
        raise SystemExit(f"{path.result}: nli params differ beyond {PATH_KNOBS}")
    weights = (float32.diagnostics["nli"].get("weights"), fast.diagnostics["nli"].get("weights"))
    if weights[0] != weights[1]:
        raise SystemExit(f"{path.result}: NLI weights {weights[1]} differ from float32's {weights[0]}")
    nli = fast.params["nli"]
    if (nli["dtype"], nli["compile"], nli.get("recheck_margin", 0) > 0) != ("bfloat16", True, path.rechecks):
        raise SystemExit(f"{path.result}: expected nli.dtype=bfloat16, nli.compile=true, {path.label}")


def metric_changes(float32: PublishedResult, fast: PublishedResult) -> list[MetricChange]:
    """Each compared variant's claim metrics under float32 and the fast path, in
    :data:`VARIANTS` x :data:`METRICS` order."""
    changes = []
    for variant in VARIANTS:
        for metric in METRICS:
            before, after = float32.metrics[variant][metric], fast.metrics[variant][metric]
            if before is None or after is None:
                raise SystemExit(f"{variant}.{metric}: undefined in a compared result")
            changes.append(MetricChange(variant, metric, before, after))
    return changes


@dataclass(frozen=True)
class PathTiming:
    """One fast path's cold time over CCP's distinct NLI pairs, and how its classes differ."""

    seconds: float
    compile_seconds: float
    largest_change: float
    #: distinct pairs whose NLI class (what CCP reads) differs from float32's
    class_flips: int
    #: the widest gap between the path's two most probable classes at a flipped pair
    widest_flip_margin: float
    #: distinct pairs the path re-scored in float32 (``nli.recheck_margin``)
    rechecked_pairs: int


@dataclass(frozen=True)
class SpeedRun:
    """Every path's cold time over CCP's NLI pairs of the workspace's FactualBio artifacts."""

    pairs: int
    distinct_pairs: int
    float32_seconds: float
    fast: dict[str, PathTiming]


def ccp_pairs(fast: PublishedResult) -> list[tuple[str, str]]:
    """CCP's (premise, hypothesis) NLI pairs of the workspace's artifacts, as the score stage
    builds them; stops unless they are as many as the results scored."""
    from ccp_inputs import CCPInputs

    requests = CCPInputs.read(DATASET, fast.params["ccp"]["score"]).requests()
    if len(requests.pairs) != fast.diagnostics.get("nli_pairs"):
        raise SystemExit(
            f"the workspace's {DATASET} artifacts give {len(requests.pairs)} NLI pairs, the results "
            f"{fast.diagnostics.get('nli_pairs')}: run `dvc exp run -S dataset={DATASET}` first"
        )
    return list(requests.pairs)


def timed_cold(
    scorer: NLIScorer, premises: list[str], hypotheses: list[str]
) -> tuple[tuple[np.ndarray, int], float, float]:
    """((class probabilities, near-ties re-scored), seconds, compile seconds) of one compiled
    path in an empty Inductor cache, its models loaded beforehand."""
    scorer.load()  # both models when it rechecks, outside the timed region

    def compile_on_one_pair() -> None:
        scorer.class_probs(premises[:1], hypotheses[:1])

    def score_all() -> tuple[np.ndarray, int]:
        before = scorer.rechecked_pairs
        return scorer.class_probs(premises, hypotheses), scorer.rechecked_pairs - before

    return timed_in_empty_inductor_cache(compile_on_one_pair, score_all)


def time_paths(results: dict[str, PublishedResult], threads: int) -> SpeedRun:
    """Score CCP's NLI pairs cold in float32, then by each fast path (each in an empty
    Inductor cache; the first compiled from nothing)."""
    torch = importlib.import_module("torch")
    torch.set_num_threads(threads)
    from hallulab.core.config import typed
    from hallulab.methods.ccp.score import nli_class

    first = results[FAST_PATHS[0].key]
    pairs = ccp_pairs(first)
    premises, hypotheses = [p for p, _ in pairs], [h for _, h in pairs]
    config = replace(typed(NLIKnobs, first.params["nli"], "nli"), dtype="float32", compile=False)
    plain = NLIScorer(config)
    plain.load()  # outside the timed region
    weights = plain.identity["weights"]
    if weights != first.diagnostics["nli"].get("weights"):
        raise SystemExit(
            f"{config.model} holds weights {weights}, the results {first.diagnostics['nli'].get('weights')}: "
            f"run `dvc exp run -S dataset={DATASET}` first"
        )
    started = time.perf_counter()
    float32 = plain.class_probs(premises, hypotheses)
    float32_seconds = time.perf_counter() - started
    float32_classes = [nli_class(row) for row in float32]

    timings = {}
    for path in FAST_PATHS:
        scorer = NLIScorer(typed(NLIKnobs, results[path.key].params["nli"], "nli"))
        (probs, rechecked), seconds, compile_seconds = timed_cold(scorer, premises, hypotheses)
        flipped = [i for i, row in enumerate(probs) if nli_class(row) != float32_classes[i]]
        margins = [float(np.diff(np.sort(probs[i])[-2:])[0]) for i in flipped]
        timings[path.key] = PathTiming(
            seconds=seconds,
            compile_seconds=compile_seconds,
            largest_change=float(np.abs(probs - float32).max()),
            class_flips=len({pairs[i] for i in flipped}),
            widest_flip_margin=max(margins, default=0.0),
            rechecked_pairs=rechecked,
        )
    return SpeedRun(len(pairs), len(set(pairs)), float32_seconds, timings)


def metrics_setup(float32: PublishedResult, changes: dict[str, list[MetricChange]]) -> dict[str, object]:
    """The section's record of each compared metric under every path, and each path's
    largest change."""
    keys = list(changes)
    metrics = {
        f"{first.variant}.{first.metric}": {
            "float32": round(first.float32, 2),
            **{key: round(changes[key][index].fast, 2) for key in keys},
        }
        for index, first in enumerate(changes[keys[0]])
    }
    return {
        "metrics": metrics,
        "largest_metric_change": {key: round(max(abs(c.change) for c in found), 2) for key, found in changes.items()},
        "claims_scored": float32.diagnostics.get("claims_scored"),
    }


def speed_rows(speed: SpeedRun) -> list[BenchRow]:
    """float32's pairs/s (the baseline) and each fast path's, compiling included."""
    rows = [
        BenchRow(
            "ccp_nli_fp32",
            f"CCP's NLI pairs on FactualBio ({speed.distinct_pairs} distinct), float32, empty call cache",
            round(speed.distinct_pairs / speed.float32_seconds, 1),
            "pairs/s",
            1.0,
        )
    ]
    for order, path in enumerate(FAST_PATHS):
        timing = speed.fast[path.key]
        when = "compiled from nothing" if order == 0 else "compiled second (precompiled header already built)"
        rows.append(
            BenchRow(
                f"ccp_nli_{path.key}",
                f"the same, {path.label}, empty call cache, {when}, compiling included "
                f"({timing.class_flips} pairs change class)",
                round(speed.distinct_pairs / timing.seconds, 1),
                "pairs/s",
                round(speed.float32_seconds / timing.seconds, 2),
            )
        )
    return rows


def roc_auc_rows(changes: dict[str, list[MetricChange]]) -> list[BenchRow]:
    """Each path's claim ROC-AUC per compared variant, its paired change in the label."""
    labels = {path.key: path.label for path in FAST_PATHS}
    return [
        BenchRow(
            f"{c.variant}_roc_auc_{key}",
            f"{c.variant} claim ROC-AUC, {labels[key]} (float32 {c.float32:.2f}; {c.change:+.2f} points)",
            round(c.fast, 2),
            "%",
        )
        for key, found in changes.items()
        for c in found
        if c.metric == "claim_roc_auc"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-speed", action="store_true", help="compare the published metrics only")
    args = parser.parse_args()
    cold_temporary_root()
    float32 = load_result(FLOAT32_RESULT)
    results = {path.key: load_result(path.result) for path in FAST_PATHS}
    changes: dict[str, list[MetricChange]] = {}
    for path in FAST_PATHS:
        comparable(float32, results[path.key], path)
        changes[path.key] = metric_changes(float32, results[path.key])
        for c in changes[path.key]:
            print(f"{path.key:24s} {c.variant:18s} {c.metric:14s} {c.float32:6.2f} -> {c.fast:6.2f} ({c.change:+.2f})")
    setup: dict[str, object] = {
        "dataset": DATASET,
        "results": {"float32": str(FLOAT32_RESULT), **{path.key: str(path.result) for path in FAST_PATHS}},
        "nli_weights": float32.diagnostics["nli"].get("weights"),
        "recheck_margin": results[FAST_PATHS[0].key].params["nli"].get("recheck_margin"),
        **metrics_setup(float32, changes),
    }
    rows = []
    if not args.skip_speed:
        speed = time_paths(results, args.threads)
        print(f"{speed.distinct_pairs} distinct pairs: float32 {speed.float32_seconds:.1f} s")
        for key, timing in speed.fast.items():
            print(
                f"{key}: {timing.seconds:.1f} s (compiling {timing.compile_seconds:.1f} s), "
                f"{speed.float32_seconds / timing.seconds:.2f}x; probabilities move by up to "
                f"{timing.largest_change:.4f}; {timing.class_flips} pairs change class (top-two gap there at most "
                f"{timing.widest_flip_margin:.4f}); {timing.rechecked_pairs} near-ties re-scored in float32"
            )
        rows += speed_rows(speed)
        setup["pairs"] = speed.pairs
        setup["distinct_pairs"] = speed.distinct_pairs
        setup["paths"] = {
            key: {
                "compile_seconds": round(t.compile_seconds, 1),
                "largest_probability_change": round(t.largest_change, 4),
                "class_flips": t.class_flips,
                "widest_flip_margin": round(t.widest_flip_margin, 4),
                "rechecked_pairs": t.rechecked_pairs,
            }
            for key, t in speed.fast.items()
        }
    record("ccp_bfloat16", rows + roc_auc_rows(changes), setup, threads=args.threads)


if __name__ == "__main__":
    main()
