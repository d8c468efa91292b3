"""Lexical Similarity: parity with lm-polygraph's own estimator (built from its own code, on
the same sample texts) at two metrics, and the method's handling rules."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from hallulab.core.config import compose, dataset_config
from hallulab.data.loaders import load_dataset
from hallulab.data.records import load_jsonl_records
from hallulab.data.schema import Record
from hallulab.methods.lexical_similarity import SPEC
from hallulab.methods.lexical_similarity.aggregate import aggregate
from hallulab.methods.lexical_similarity.rouge import rouge_f, tokens
from hallulab.pipeline.context import AggregateContext
from hallulab.pipeline.params import ParamsView

REPO = Path(__file__).resolve().parents[1]
TOY = REPO / "data" / "toy" / "passages.jsonl"


def _sample_sets() -> list[list[str]]:
    sets = [list(p.samples) for p in load_jsonl_records(TOY)]
    if os.environ.get("HALLULAB_DATA_ROOT"):  # the real short answers of NQ-open, 10 samples each
        records, _ = load_dataset({**dataset_config("nq_open"), "limit": 12})
        sets += [list(p.samples) for p in records]
    return sets


@pytest.mark.reference
@pytest.mark.parametrize("metric", ["rougeL", "rouge1"])
def test_uncertainty_equals_lm_polygraphs_estimator(metric: str) -> None:
    from lm_polygraph.estimators.lexical_similarity import LexicalSimilarity

    sets = _sample_sets()
    expected = LexicalSimilarity(metric)({"sample_texts": sets})
    records = [Record(id=f"p{i}", response="r", sentences=["r"], samples=s) for i, s in enumerate(sets)]
    params = compose([f"lexical_similarity.metrics=[{metric}]"])
    view = ParamsView(params, SPEC.aggregate.param_keys(), "aggregate_lexical_similarity")
    frame = aggregate(AggregateContext("t", records, {}, None, view)).scores
    assert list(frame["variant"].unique()) == [f"lexsim_{metric}"]
    np.testing.assert_allclose(frame["score"].to_numpy(), expected, rtol=0, atol=1e-12)


@pytest.mark.reference
def test_rouge_equals_rouge_score_with_and_without_stemming() -> None:
    from rouge_score import rouge_scorer

    pairs = [("The cats were running home.", "A cat ran to the homes!"), ("Paris, France", "paris is in france")]
    for stem in (True, False):
        scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=stem)
        for a, b in pairs:
            reference = scorer.score(a, b)
            for metric in ("rouge1", "rouge2", "rougeL"):
                got = rouge_f(tokens(a, stem), tokens(b, stem), metric)
                assert got == pytest.approx(reference[metric].fmeasure, abs=1e-12)


def test_a_record_with_fewer_than_two_samples_is_counted_not_scored() -> None:
    records = [
        Record(id="a", response="r", sentences=["r"], samples=["one answer", "another answer"]),
        Record(id="b", response="r", sentences=["r"], samples=["alone"]),
        Record(id="c", prompt="q", response=None, sentences=[], samples=[]),
    ]
    view = ParamsView(compose(), SPEC.aggregate.param_keys(), "aggregate_lexical_similarity")
    done = aggregate(AggregateContext("t", records, {}, None, view))
    assert set(done.scores["record_id"]) == {"a"}
    assert done.diagnostics["records_with_fewer_than_two_samples"] == 1
    assert done.diagnostics["records_without_response"] == 1
    twins = Record(id="x", response="r", sentences=["r"], samples=["same", "same"])
    identical = aggregate(AggregateContext("t", [twins], {}, None, view))
    assert set(identical.scores["score"]) == {-1.0}  # identical samples: similarity 1, the least uncertain
