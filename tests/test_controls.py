"""The typed contract between an aggregate step and the stages that read it."""

from __future__ import annotations

import pandas as pd
import pytest

from hallulab.pipeline.context import Aggregated
from hallulab.pipeline.controls import AggregateControls, KnobPoint


def test_controls_round_trip_through_their_own_file_and_stay_out_of_the_diagnostics() -> None:
    controls = AggregateControls(
        thresholds={"sf": 0.25},
        headline_variants=("a", "b"),
        knob_curve={"ccp_k3": KnobPoint("ccp_claim", "k", 3)},
    )
    aggregated = Aggregated(pd.DataFrame(), {"parse_failures": 2}, controls)
    assert aggregated.record() == {"parse_failures": 2}
    stored = controls.to_dict()
    assert stored == {
        "thresholds": {"sf": 0.25},
        "headline_variants": ["a", "b"],
        "knob_curve": {"ccp_k3": {"series": "ccp_claim", "k": 3}},
    }
    assert AggregateControls.from_record(stored, "x") == controls


def test_a_method_without_controls_writes_none_and_reads_the_defaults() -> None:
    aggregated = Aggregated(pd.DataFrame(), {"n": 1})
    assert aggregated.record() == {"n": 1}
    assert aggregated.controls.to_dict() == {}
    assert AggregateControls.from_record({}, "x") == AggregateControls()


def test_a_misspelt_control_is_an_error_where_it_is_written() -> None:
    with pytest.raises(TypeError):
        AggregateControls(headline_variant=("a",))  # type: ignore[call-arg]
    with pytest.raises(ValueError, match=r"set them on Aggregated\.controls"):
        Aggregated(pd.DataFrame(), {"thresholds": {"a": 0.1}}).record()


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"thresholds": {"a": "high"}}, "thresholds must map variants to numbers"),
        ({"headline_variants": "a"}, "headline_variants must be a list"),
        ({"knob_curve": {"v": {"k": 3}}}, r"knob_curve\.v: a knob point is"),
        ({"knob_curve": {"v": {"series": "s", "k": 3, "n": 2}}}, r"knob_curve\.v: a knob point is"),
    ],
)
def test_a_control_of_the_wrong_shape_is_named_where_it_is_read(record: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AggregateControls.from_record(record, "metrics/toy/m.info.json")


def test_stored_raw_scores_round_trip_and_refuse_a_misspelt_file() -> None:
    from hallulab.methods.hallucheck.raw import HalluCheckScores

    scores = HalluCheckScores(taggings=["ner"], regenerations=["generator/greedy"], llms={}, records={})
    assert list(scores.to_dict()) == ["taggings", "regenerations", "llms", "records", "diagnostics"]
    assert HalluCheckScores.from_dict(scores.to_dict()) == scores
    with pytest.raises(
        ValueError, match=r"scores\.json: not the stored scores of HalluCheckScores .*unknown \['tagings'\]"
    ):
        HalluCheckScores.from_dict({**scores.to_dict(), "tagings": []}, "scores.json")
    with pytest.raises(ValueError, match=r"missing \['records'\]"):
        HalluCheckScores.from_dict({"taggings": [], "regenerations": [], "llms": {}}, "scores.json")
