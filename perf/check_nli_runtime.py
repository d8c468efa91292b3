"""Full-set check: the NLI runtime ``openvino_int8`` against float32 torch, on the metrics.

A faster NLI path is accepted only where it moves SelfCheck-NLI's NonFact AUC-PR on the whole
of WikiBio and CCP's claim ROC-AUC on FactualBio (the CCP paper's Table 2 protocol, K = 10,
each context) by at most half a point. Each side of each comparison is a published result
written by ``make result`` (its ``command``):

- ``results/wikibio/selfcheck_nli_runtime_torch.json`` and
  ``results/wikibio/selfcheck_nli_runtime_openvino_int8.json``
  (``ARGS="-S nli.runtime=openvino_int8"``);
- ``results/factualbio/ccp.json`` and ``results/factualbio/ccp_openvino_int8.json``.

The check stops unless the two sides share every parameter but ``nli.runtime`` and the same NLI
weights, so each change is paired on the same units. It reads the files and measures nothing;
the speed is ``bench_nli.py``'s ``ov_int8`` row, side by side with the reference. Records the
section ``nli_runtime`` of ``perf/results.json``:

    python perf/check_nli_runtime.py
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hallulab.results.published import PublishedResult, load_result
from hallulab.tooling.bench_record import BenchRow, record

BUDGET_POINTS = 0.5
RUNTIME = "openvino_int8"


@dataclass(frozen=True)
class Comparison:
    """One metric of one variant, float32 torch against the runtime."""

    torch_file: str
    runtime_file: str
    variant: str
    metric: str
    what: str


COMPARISONS = (
    Comparison(
        "wikibio/selfcheck_nli_runtime_torch",
        "wikibio/selfcheck_nli_runtime_openvino_int8",
        "nli",
        "nonfact_aucpr",
        "SelfCheck-NLI NonFact AUC-PR, WikiBio",
    ),
    *(
        Comparison(
            "factualbio/ccp",
            "factualbio/ccp_openvino_int8",
            f"ccp_k10_{context}",
            "claim_roc_auc",
            f"CCP ccp_k10_{context} claim ROC-AUC, FactualBio",
        )
        for context in ("claimpref", "nocontext", "sentpref")
    ),
)


def _weights(diagnostics: Mapping[str, Any]) -> str | None:
    """The NLI weights' digest recorded anywhere in a result's diagnostics."""
    for key, value in diagnostics.items():
        if key == "weights" and isinstance(value, str):
            return value
        if isinstance(value, Mapping):
            found = _weights(value)
            if found is not None:
                return found
    return None


def comparable(torch_side: PublishedResult, runtime_side: PublishedResult) -> None:
    """Stop unless the two differ only in ``nli.runtime``, on the same NLI weights."""
    first = {k: v for k, v in torch_side.params.items() if k != "nli"}
    second = {k: v for k, v in runtime_side.params.items() if k != "nli"}
    if first != second:
        differing = sorted(k for k in first.keys() | second.keys() if first.get(k) != second.get(k))
        raise SystemExit(f"{runtime_side.name}: params differ from {torch_side.name} beyond nli ({differing})")
    torch_nli = {k: v for k, v in torch_side.params["nli"].items() if k != "runtime"}
    runtime_nli = {k: v for k, v in runtime_side.params["nli"].items() if k != "runtime"}
    if torch_nli != runtime_nli:
        raise SystemExit(f"{runtime_side.name}: nli params differ from {torch_side.name} beyond nli.runtime")
    if torch_side.params["nli"].get("runtime", "torch") != "torch" or runtime_side.params["nli"]["runtime"] != RUNTIME:
        raise SystemExit(f"expected nli.runtime torch in {torch_side.name} and {RUNTIME} in {runtime_side.name}")
    weights = (_weights(torch_side.diagnostics), _weights(runtime_side.diagnostics))
    if weights[0] is None or weights[0] != weights[1]:
        raise SystemExit(f"{runtime_side.name}: NLI weights {weights[1]} differ from {torch_side.name}'s {weights[0]}")


def main() -> None:
    root = Path("results")
    rows, changes = [], {}
    for item in COMPARISONS:
        torch_side = load_result(root / f"{item.torch_file}.json")
        runtime_side = load_result(root / f"{item.runtime_file}.json")
        comparable(torch_side, runtime_side)
        before = torch_side.metrics[item.variant][item.metric]
        after = runtime_side.metrics[item.variant][item.metric]
        if before is None or after is None:
            raise SystemExit(f"{item.variant}.{item.metric}: undefined in a compared result")
        change = after - before
        changes[f"{item.variant}.{item.metric}"] = round(change, 2)
        verdict = "within" if abs(change) <= BUDGET_POINTS else "OUTSIDE"
        label = f"{item.what}, {RUNTIME} (float32 torch {before:.2f}; {change:+.2f} points, {verdict} the budget)"
        rows.append(BenchRow(f"{item.variant}_{item.metric}", label, round(after, 2), "%"))
        print(label)
    passed = all(abs(c) <= BUDGET_POINTS for c in changes.values())
    print("accepted" if passed else f"refused: a change is larger than {BUDGET_POINTS} points")
    setup = {"runtime": RUNTIME, "budget_points": BUDGET_POINTS, "changes": changes, "accepted": passed}
    record("nli_runtime", rows, setup)


if __name__ == "__main__":
    main()
