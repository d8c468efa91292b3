"""Full-set check: CCP on FactualBio with the NLI scorer's fast CPU path against float32.

Issue 21 §3 asks for an NLI path on the CPU with at least 3x the float32 pairs/s that moves
CCP's ROC-AUC on FactualBio (claim level, the CCP paper's Table 2 protocol) by at most half
a point. The path is ``nli.dtype: bfloat16`` with ``nli.compile: true`` (see
``check_nli_bfloat16.py`` for SelfCheck-NLI on WikiBio) and, as configured,
``nli.recheck_margin``: CCP reads only each pair's argmax class, which bfloat16 rounding flips
where two classes are nearly tied, so those near-ties are re-scored in float32. Two parts:

- **metrics**: the two published FactualBio CCP results, float32 (``results/factualbio/ccp.json``)
  and the fast path (``results/factualbio/ccp_bf16_compiled.json``), each written by
  ``make result`` (their ``command``). They must share every parameter but ``nli.dtype``,
  ``nli.compile`` and ``nli.recheck_margin`` and the same NLI weights, so the change of each variant's claim ROC-AUC,
  PR-AUC and PRR is paired on the same claims; the check stops if they do not.
- **speed**: CCP's NLI pairs (every context the results scored) built from the FactualBio
  artifacts in the workspace (a ``dvc exp run -S dataset=factualbio`` leaves them there),
  scored cold by both paths in one process, the compiled path from nothing (an empty
  Inductor cache and a fresh temporary root, compiling inside the timed region), with the
  largest change of a class probability, the pairs whose class changes and the near-ties
  re-scored. CCP's pairs are a word with its claim or sentence
  prefix, a few to a few dozen tokens: tokenising and per-batch work weigh more than on
  SelfCheck-NLI's passage-length pairs, so the ratio is CCP's own.

Records the section ``ccp_bfloat16`` of ``benchmarks/results.json``. Usage:

    python benchmarks/check_ccp_bfloat16.py [--threads 2] [--skip-speed]
"""

from __future__ import annotations

import argparse
import importlib
import os
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from check_nli_bfloat16 import cold_temporary_root

from hallulab.bench_record import BenchRow, record
from hallulab.results import RESULTS_DIR, PublishedResult, load_result

DATASET = "factualbio"
FLOAT32_RESULT = Path(RESULTS_DIR) / DATASET / "ccp.json"
FAST_RESULT = Path(RESULTS_DIR) / DATASET / "ccp_bf16_compiled.json"
#: the parameters the two results may differ in: the path under test (``recheck_margin`` acts
#: only in reduced precision, and the float32 result may predate it)
PATH_KNOBS = ("dtype", "compile", "recheck_margin")
#: the variants compared: the paper's CCP in each NLI context (K = 10, words)
VARIANTS = ("ccp_k10_claimpref", "ccp_k10_nocontext", "ccp_k10_sentpref")
METRICS = ("claim_roc_auc", "claim_pr_auc", "claim_prr")


@dataclass(frozen=True)
class MetricChange:
    """One variant's claim-level metric under both paths, in percent."""

    variant: str
    metric: str
    float32: float
    fast: float

    @property
    def change(self) -> float:
        return self.fast - self.float32


def comparable(float32: PublishedResult, fast: PublishedResult) -> None:
    """Stop unless the two results differ only in the path's knobs, on the same NLI weights."""
    base = {k: v for k, v in float32.params.items() if k != "nli"}
    other = {k: v for k, v in fast.params.items() if k != "nli"}
    if base != other:
        differing = sorted(k for k in base.keys() | other.keys() if base.get(k) != other.get(k))
        raise SystemExit(f"{FAST_RESULT}: params differ from {FLOAT32_RESULT} beyond nli ({differing})")
    base_nli = {k: v for k, v in float32.params["nli"].items() if k not in PATH_KNOBS}
    fast_nli = {k: v for k, v in fast.params["nli"].items() if k not in PATH_KNOBS}
    if base_nli != fast_nli:
        raise SystemExit(f"{FAST_RESULT}: nli params differ beyond {PATH_KNOBS}")
    weights = (float32.diagnostics["nli"].get("weights"), fast.diagnostics["nli"].get("weights"))
    if weights[0] != weights[1]:
        raise SystemExit(f"{FAST_RESULT}: NLI weights {weights[1]} differ from float32's {weights[0]}")
    if (fast.params["nli"]["dtype"], fast.params["nli"]["compile"]) != ("bfloat16", True):
        raise SystemExit(f"{FAST_RESULT}: expected nli.dtype=bfloat16 and nli.compile=true")


def metric_changes(float32: PublishedResult, fast: PublishedResult) -> list[MetricChange]:
    changes = []
    for variant in VARIANTS:
        for metric in METRICS:
            before, after = float32.metrics[variant][metric], fast.metrics[variant][metric]
            if before is None or after is None:
                raise SystemExit(f"{variant}.{metric}: undefined in a compared result")
            changes.append(MetricChange(variant, metric, before, after))
    return changes


@dataclass(frozen=True)
class SpeedRun:
    """Both paths' cold time over CCP's NLI pairs of the workspace's FactualBio artifacts."""

    pairs: int
    distinct_pairs: int
    float32_seconds: float
    fast_seconds: float
    compile_seconds: float
    largest_change: float
    #: distinct pairs whose NLI class (what CCP reads) differs from float32's
    class_flips: int
    #: the widest gap between the fast path's two most probable classes at a flipped pair
    widest_flip_margin: float
    #: distinct pairs the fast path re-scored in float32 (``nli.recheck_margin``)
    rechecked_pairs: int


def time_paths(fast: PublishedResult, threads: int) -> SpeedRun:
    """Score CCP's NLI pairs cold in float32, then in bfloat16 compiled from nothing."""
    torch = importlib.import_module("torch")
    torch.set_num_threads(threads)
    from hallulab.artifacts.claims import claims_by_record
    from hallulab.artifacts.response_tokens import token_stats
    from hallulab.artifacts.sentences import spans_by_record
    from hallulab.core.config import typed
    from hallulab.data.records import load_jsonl_passages
    from hallulab.methods.ccp.score import CCPScoreKnobs, nli_class, nli_requests
    from hallulab.nli.scorer import NLIConfig, NLIScorer
    from hallulab.pipeline import paths
    from hallulab.pipeline.runner import read_artifacts

    passages = [p for p in load_jsonl_passages(paths.passages(DATASET)) if p.response is not None]
    artifacts = read_artifacts(["response_tokens", "claims", "sentences"], DATASET)
    knobs = typed(CCPScoreKnobs, fast.params["ccp"]["score"], "ccp.score")
    requests = nli_requests(
        passages,
        token_stats(artifacts["response_tokens"]),
        claims_by_record(artifacts["claims"]),
        spans_by_record(artifacts["sentences"]),
        knobs.nli_contexts,
        int(artifacts["response_tokens"]["top_k"]),
    )
    if len(requests.pairs) != fast.diagnostics.get("nli_pairs"):
        raise SystemExit(
            f"the workspace's {DATASET} artifacts give {len(requests.pairs)} NLI pairs, the results "
            f"{fast.diagnostics.get('nli_pairs')}: run `dvc exp run -S dataset={DATASET}` first"
        )
    premises, hypotheses = [p for p, _ in requests.pairs], [h for _, h in requests.pairs]
    config = replace(typed(NLIConfig, fast.params["nli"], "nli"), dtype="float32", compile=False)
    plain = NLIScorer(config)
    weights = plain.identity["weights"]  # loads the model outside the timed region
    if weights != fast.diagnostics["nli"].get("weights"):
        raise SystemExit(
            f"{config.model} holds weights {weights}, the results {fast.diagnostics['nli'].get('weights')}: "
            f"run `dvc exp run -S dataset={DATASET}` first"
        )
    started = time.perf_counter()
    float32 = plain.class_probs(premises, hypotheses, progress=True)
    float32_seconds = time.perf_counter() - started

    compiled = NLIScorer(replace(typed(NLIConfig, fast.params["nli"], "nli"), compile=True))
    compiled.identity  # noqa: B018
    with tempfile.TemporaryDirectory() as inductor_cache:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = inductor_cache
        started = time.perf_counter()
        compiled.class_probs(premises[:1], hypotheses[:1])
        compile_seconds = time.perf_counter() - started
        fast_probs = compiled.class_probs(premises, hypotheses, progress=True)
        fast_seconds = time.perf_counter() - started
        del os.environ["TORCHINDUCTOR_CACHE_DIR"]
    flipped = [i for i, (a, b) in enumerate(zip(float32, fast_probs, strict=True)) if nli_class(a) != nli_class(b)]
    distinct_flips = {requests.pairs[i] for i in flipped}
    margins = [float(np.diff(np.sort(fast_probs[i])[-2:])[0]) for i in flipped]
    return SpeedRun(
        pairs=len(requests.pairs),
        distinct_pairs=len(set(requests.pairs)),
        float32_seconds=float32_seconds,
        fast_seconds=fast_seconds,
        compile_seconds=compile_seconds,
        largest_change=float(np.abs(fast_probs - float32).max()),
        class_flips=len(distinct_flips),
        rechecked_pairs=compiled.rechecked_pairs,
        widest_flip_margin=max(margins, default=0.0),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-speed", action="store_true", help="compare the published metrics only")
    args = parser.parse_args()
    cold_temporary_root()
    float32, fast = load_result(FLOAT32_RESULT), load_result(FAST_RESULT)
    comparable(float32, fast)
    changes = metric_changes(float32, fast)
    for change in changes:
        print(
            f"{change.variant:20s} {change.metric:14s} {change.float32:7.2f} -> {change.fast:7.2f} "
            f"({change.change:+.2f})"
        )
    rows = []
    setup: dict[str, object] = {
        "dataset": DATASET,
        "results": {"float32": str(FLOAT32_RESULT), "bf16_compiled": str(FAST_RESULT)},
        "nli_weights": float32.diagnostics["nli"].get("weights"),
        "claims_scored": float32.diagnostics.get("claims_scored"),
        "metrics": {
            f"{c.variant}.{c.metric}": {"float32": round(c.float32, 2), "bf16_compiled": round(c.fast, 2)}
            for c in changes
        },
        "largest_metric_change": round(max(abs(c.change) for c in changes), 2),
    }
    if not args.skip_speed:
        speed = time_paths(fast, args.threads)
        print(
            f"{speed.distinct_pairs} distinct pairs: float32 {speed.float32_seconds:.1f} s, bfloat16 + compile "
            f"{speed.fast_seconds:.1f} s (compiling {speed.compile_seconds:.1f} s), "
            f"{speed.float32_seconds / speed.fast_seconds:.2f}x; "
            f"probabilities move by up to {speed.largest_change:.4f}; "
            f"{speed.class_flips} pairs change class (the fast path's top-two gap there at most "
            f"{speed.widest_flip_margin:.4f}); {speed.rechecked_pairs} near-ties re-scored in float32"
        )
        rows += [
            BenchRow(
                "ccp_nli_fp32",
                f"CCP's NLI pairs on FactualBio ({speed.distinct_pairs} distinct), float32, empty call cache",
                round(speed.distinct_pairs / speed.float32_seconds, 1),
                "pairs/s",
                1.0,
            ),
            BenchRow(
                "ccp_nli_bf16_compiled",
                "the same, bfloat16 + nli.compile, compiled from nothing (compiling included; "
                f"probabilities move by up to {speed.largest_change:.3f})",
                round(speed.distinct_pairs / speed.fast_seconds, 1),
                "pairs/s",
                round(speed.float32_seconds / speed.fast_seconds, 2),
            ),
        ]
        setup["pairs"] = speed.pairs
        setup["distinct_pairs"] = speed.distinct_pairs
        setup["compile_seconds"] = round(speed.compile_seconds, 1)
        setup["class_flips"] = speed.class_flips
        setup["widest_flip_margin"] = round(speed.widest_flip_margin, 4)
        setup["recheck_margin"] = fast.params["nli"].get("recheck_margin")
        setup["rechecked_pairs"] = speed.rechecked_pairs
    for change in changes:
        if change.metric != "claim_roc_auc":
            continue
        rows.append(
            BenchRow(
                f"{change.variant}_roc_auc",
                f"{change.variant} claim ROC-AUC, bfloat16 + nli.compile (float32 {change.float32:.2f}; "
                f"{change.change:+.2f} points)",
                round(change.fast, 2),
                "%",
            )
        )
    record("ccp_bfloat16", rows, setup, threads=args.threads)


if __name__ == "__main__":
    main()
