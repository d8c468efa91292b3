"""Kernel Language Entropy (Nikitin et al., 2024) equals lm-polygraph 0.7.0's
``KernelLanguageEntropy`` to float64 rounding, at two settings of its knobs (t, scale, jitter) and
three choices of samples (the first 3, the first 5, a seeded random 4).

lm-polygraph's semantic matrices come from its own ``SemanticMatrixCalculator`` run on the NLI
stand-in of :mod:`tests.test_reference_parity_graph_uq` (float64 logits that are a fixed function
of the pair's words, no trained model: the comparison is of what both sides compute from the same
NLI outputs); hallulab's side sends the same function through the ``nli_pair_matrix`` artifact's
request with the same softmax and runs the method's aggregate step on the records.

Tolerance, 1e-12 absolute: the two sides compute one real-valued formula by different float64
routes. lm-polygraph sums both directions as E + E^T + (2 - E - E^T - C - C^T) / 2, diagonal
included, exponentiates -t L with scipy's ``expm`` (Padé approximation) and takes the eigenvalues
with ``numpy.linalg.eig``; hallulab weighs the three stored class probabilities, drops the diagonal,
takes the kernel from ``eigh``'s spectrum of L and the entropy from ``eigvalsh``. Each route is
backward stable, so the scores differ by a few multiples of N machine epsilons (at most 6e-15 on
these records); the bound leaves two orders of magnitude of room, while a change of the formula's
time from 0.3 to 0.31 moves the scores by more than 1e-3 (a neutral weight of 0.4 for 1/2, or a
kernel divided by its trace, fails the test too).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

from hallulab.artifacts.nli_pair_matrix.build import pair_matrices_of
from hallulab.core.config import compose
from hallulab.data.schema import Record
from hallulab.methods.sample_matrix import selected_columns
from hallulab.methods.sample_selection import SampleKnobs
from hallulab.pipeline.context import AggregateContext
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.registry import method
from tests.test_reference_parity_graph_uq import EXTRA, _softmax, _stand_in_nli

pytestmark = pytest.mark.reference

NAME = "kernel_language_entropy"
TOLERANCE = 1e-12

#: (t, scale, jitter): lm-polygraph's defaults, and a hotter kernel, unscaled, with a jitter
SETTINGS = [(0.3, True, 0.0), (1.0, False, 1e-3)]
#: samples.used, samples.selection
CHOICES = [(3, "first"), (5, "first"), (4, "random")]


def _chosen(record: Record, n: int, selection: str) -> list[str]:
    columns = selected_columns(record.id, len(record.samples), SampleKnobs(used=n, selection=selection))
    return [record.samples[int(i)] for i in columns]


def _theirs(records: list[Record], n: int, selection: str, t: float, scale: bool, jitter: float) -> np.ndarray:
    from lm_polygraph.estimators import KernelLanguageEntropy
    from lm_polygraph.stat_calculators.semantic_matrix import SemanticMatrixCalculator

    stats: dict[str, Any] = {"sample_texts": [_chosen(p, n, selection) for p in records]}
    stats |= SemanticMatrixCalculator(_stand_in_nli())(stats, texts=[], model=None)
    estimator = KernelLanguageEntropy(t=t, normalize=True, scale=scale, jitter=jitter)
    return np.asarray(estimator(stats), dtype=np.float64)


def _ours(records: list[Record], n: int, selection: str, t: float, scale: bool, jitter: float) -> np.ndarray:
    artifact = {
        "records": {
            rid: m.to_dict() for rid, m in pair_matrices_of(records, lambda p, h: _softmax(p, h).numpy()).items()
        }
    }
    conf = compose([])[NAME]
    knobs = {**conf, "kernels": ["heat"], "t": t, "scale": scale, "jitter": jitter}
    params = compose([f"samples.used={n}", f"samples.selection={selection}"]) | {NAME: knobs}
    view = ParamsView(params, method(NAME).aggregate.param_keys(), f"aggregate_{NAME}")
    ctx: AggregateContext[None] = AggregateContext("t", records, {"nli_pair_matrix": artifact}, None, view)
    frame = importlib.import_module(f"hallulab.methods.{NAME}.aggregate").aggregate(ctx).scores
    frame = frame[frame["variant"] == "kle_heat"].set_index("record_id")
    return frame.loc[[p.id for p in records], "score"].to_numpy(dtype=np.float64)


@pytest.mark.parametrize(("t", "scale", "jitter"), SETTINGS)
def test_kle_heat_equals_lm_polygraphs_kernel_language_entropy(
    toy_passages: list[Record], t: float, scale: bool, jitter: float
) -> None:
    records = [*toy_passages, EXTRA]
    found = {}
    for n, selection in CHOICES:
        theirs = _theirs(records, n, selection, t, scale, jitter)
        ours = _ours(records, n, selection, t, scale, jitter)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=TOLERANCE)
        found[(n, selection)] = ours
    # the records separate what they must: the scores differ between records and between N
    assert len(set(np.round(found[(5, "first")], 9).tolist())) > 1
    assert np.max(np.abs(found[(3, "first")] - found[(5, "first")])) > 1e-3
    # and a change of the formula's time the tolerance could hide is far outside it
    nearby = _ours(records, 5, "first", t + 0.01, scale, jitter)
    assert np.max(np.abs(nearby - found[(5, "first")])) > 1e-3
