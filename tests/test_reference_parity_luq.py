"""LUQ's samples reading (``luq_response``) equals lm-polygraph 0.7.0's ``LUQ`` to float64
rounding, at three choices of samples (the first 3, the first 5, a seeded random 4).

lm-polygraph's estimator reads the entailment and contradiction *logits* of its own
``SemanticMatrixCalculator``, run on the NLI stand-in of
:mod:`tests.test_reference_parity_graph_uq` (float64 logits that are a fixed function of the
pair's words); hallulab's side sends the same function through the ``nli_pair_matrix``
artifact's request, which stores softmax *probabilities*, and runs the method's aggregate step.
So the test also holds the step that turns stored probabilities into LUQ's support,
p_e / (p_e + p_c) = exp(z_e) / (exp(z_e) + exp(z_c)).

Tolerance, 1e-12 absolute: the two sides compute that support in two algebraically equal forms
(from the logits; from the three-class softmax), each term within a few float64 ulps of the
other, then the same mean over at most 5 x 4 ordered pairs; the scores differ by at most 4e-16.
The bound leaves orders of magnitude of room, while reading the three-class entailment
probability for the support (the neutral class not left out) or counting the diagonal moves
the scores by more than 1e-3.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

from hallulab.artifacts.nli_pair_matrix import pair_matrices
from hallulab.artifacts.nli_pair_matrix.build import pair_matrices_of
from hallulab.core.config import compose
from hallulab.data.schema import Record
from hallulab.methods.luq.formula import samples_uncertainty
from hallulab.methods.sample_matrix import selected_columns
from hallulab.methods.sample_scores import SampleMatrices, SampleMatrixScores
from hallulab.methods.sample_selection import SampleKnobs
from hallulab.pipeline.context import AggregateContext
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.registry import method
from tests.test_reference_parity_graph_uq import EXTRA, _softmax, _stand_in_nli

pytestmark = pytest.mark.reference

NAME = "luq"
TOLERANCE = 1e-12
#: samples.used, samples.selection
CHOICES = [(3, "first"), (5, "first"), (4, "random")]


def _chosen(record: Record, n: int, selection: str) -> list[str]:
    columns = selected_columns(record.id, len(record.samples), SampleKnobs(used=n, selection=selection))
    return [record.samples[int(i)] for i in columns]


def _theirs(records: list[Record], n: int, selection: str) -> np.ndarray:
    from lm_polygraph.estimators import LUQ
    from lm_polygraph.stat_calculators.semantic_matrix import SemanticMatrixCalculator

    stats: dict[str, Any] = {"sample_texts": [_chosen(p, n, selection) for p in records]}
    stats |= SemanticMatrixCalculator(_stand_in_nli())(stats, texts=[], model=None)
    return np.asarray(LUQ()(stats), dtype=np.float64)


def _artifact(records: list[Record]) -> dict[str, Any]:
    matrices = pair_matrices_of(records, lambda p, h: _softmax(p, h).numpy())
    return {"records": {rid: m.to_dict() for rid, m in matrices.items()}}


def _ours(records: list[Record], n: int, selection: str) -> np.ndarray:
    conf = compose([])[NAME]
    params = compose([f"samples.used={n}", f"samples.selection={selection}"]) | {
        NAME: {**conf, "readings": ["response"]}
    }
    view = ParamsView(params, method(NAME).aggregate.param_keys(), f"aggregate_{NAME}")
    raw = SampleMatrixScores((SampleMatrices(NAME, "luq_sentence", {}, {}),))
    ctx = AggregateContext("t", records, {"nli_pair_matrix": _artifact(records)}, raw, view)
    frame = importlib.import_module(f"hallulab.methods.{NAME}.aggregate").aggregate(ctx).scores
    frame = frame[frame["variant"] == "luq_response"].set_index("record_id")
    return frame.loc[[p.id for p in records], "score"].to_numpy(dtype=np.float64)


def test_luq_response_equals_lm_polygraphs_luq(toy_passages: list[Record]) -> None:
    records = [*toy_passages, EXTRA]
    found = {}
    for n, selection in CHOICES:
        ours = _ours(records, n, selection)
        np.testing.assert_allclose(ours, _theirs(records, n, selection), rtol=0, atol=TOLERANCE)
        found[(n, selection)] = ours
    # the records separate what they must: the scores differ between records and between N
    assert len(set(np.round(found[(5, "first")], 9).tolist())) > 1
    assert np.max(np.abs(found[(3, "first")] - found[(5, "first")])) > 1e-3
    # the readings the tolerance must not hide are far outside it
    stored = pair_matrices(_artifact(records))
    three_class = [1 - np.mean(m.entail[~np.eye(m.size, dtype=bool)]) for m in stored.values()]
    with_diagonal = [1 - np.mean(m.entail / (m.entail + m.contra)) for m in stored.values()]
    every = np.asarray([samples_uncertainty(m.entail, m.contra) for m in stored.values()])
    assert np.max(np.abs(every - three_class)) > 1e-3
    assert np.max(np.abs(every - with_diagonal)) > 1e-3
