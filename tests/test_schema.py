from __future__ import annotations

import json

import pytest

from hallulab.core.errors import RecordError
from hallulab.data.loaders import load_jsonl_records
from hallulab.data.schema import LABEL_VALUES, record_from_dict


def _record(**changes: object) -> dict[str, object]:
    base: dict[str, object] = {
        "id": "p1",
        "response": "A. B.",
        "sentences": ["A.", "B."],
        "labels": ["accurate", 0.5],
        "samples": ["A. C."],
    }
    base.update(changes)
    return base


def test_labels_map_wikibio_names_to_numbers() -> None:
    record = record_from_dict(_record())
    assert record.labels == (LABEL_VALUES["accurate"], 0.5)
    assert record.passage_label == pytest.approx(0.25)


def test_round_trip_preserves_every_field() -> None:
    record = record_from_dict(_record(prompt="about A", reference="ref", meta={"k": 1}))
    assert record_from_dict(record.to_dict()) == record


@pytest.mark.parametrize(
    ("changes", "field", "fragment"),
    [
        ({"response": ""}, "response", "empty"),
        ({"sentences": []}, "sentences", "at least one"),
        ({"sentences": ["A.", 3]}, "sentences[1]", "string"),
        ({"sentences": ["A.", "  "]}, "sentences[1]", "blank"),
        ({"labels": ["accurate"]}, "labels", "1 labels for 2 sentences"),
        ({"labels": ["accurate", "wrong"]}, "labels[1]", "unknown label"),
        ({"labels": ["accurate", 1.5]}, "labels[1]", "outside [0, 1]"),
        ({"samples": "not a list"}, "samples", "list of strings"),
        ({"response": "A cat \ud83d sat."}, "response", "not valid UTF-8"),  # a lone surrogate
        ({"samples": ["ok", "half \ud83d"]}, "samples[1]", "at character 5, not valid UTF-8"),
        ({"prompt": "why \udfff"}, "prompt", "not valid UTF-8"),
    ],
)
def test_bad_field_error_names_record_and_field(changes: dict[str, object], field: str, fragment: str) -> None:
    with pytest.raises(RecordError) as caught:
        record_from_dict(_record(**changes))
    assert caught.value.record_id == "p1"
    assert caught.value.field_name == field
    assert fragment in str(caught.value)
    assert "'p1'" in str(caught.value) and repr(field) in str(caught.value)


def test_missing_id_is_named_by_line(tmp_path) -> None:
    path = tmp_path / "bad.jsonl"
    good = _record()
    bad = _record()
    del bad["id"]
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"'#2', field 'id'"):
        load_jsonl_records(path)


def test_jsonl_error_names_file_and_line(tmp_path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_record()) + "\n" + json.dumps(_record(id="p2", labels=[0, 2])) + "\n")
    with pytest.raises(RecordError) as caught:
        load_jsonl_records(path)
    assert caught.value.record_id == "p2"
    assert f"{path}:2" in str(caught.value)


def test_malformed_json_line_is_named(tmp_path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(_record()) + "\n{not json\n")
    with pytest.raises(ValueError, match=r"broken.jsonl:2"):
        load_jsonl_records(path)


def test_toy_set_is_valid_and_has_every_label_kind(toy_passages) -> None:
    assert len(toy_passages) == 6
    labels = {label for p in toy_passages for label in p.labels}
    assert labels == {0.0, 0.5, 1.0}
    assert all(len(p.samples) == 5 for p in toy_passages)
    assert any(p.passage_label == 1.0 for p in toy_passages)  # a total-hallucination passage
