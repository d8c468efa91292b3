from __future__ import annotations

from collections import Counter

import pytest

from hallulab.core.errors import RecordError
from hallulab.data.loaders import (
    DATA_ROOT_ENV,
    DatasetConfigError,
    load_dataset,
    select_samples,
)
from tests.conftest import TOY, WIKIBIO_CFG, requires_wikibio


@requires_wikibio
def test_wikibio_local_copy_has_the_documented_counts(wikibio_passages) -> None:
    assert len(wikibio_passages) == 238
    assert sum(len(p.sentences) for p in wikibio_passages) == 1908
    labels = Counter(label for p in wikibio_passages for label in p.labels)
    assert labels == {1.0: 761, 0.5: 631, 0.0: 516}
    assert {len(p.samples) for p in wikibio_passages} == {20}
    assert sum(p.passage_label == 1.0 for p in wikibio_passages) == 32
    assert sum(p.passage_label == 0.0 for p in wikibio_passages) == 12


def test_local_source_without_data_root_says_which_variable(monkeypatch) -> None:
    monkeypatch.delenv(DATA_ROOT_ENV, raising=False)
    with pytest.raises(DatasetConfigError, match=DATA_ROOT_ENV):
        load_dataset({**WIKIBIO_CFG, "source": "local"})


def test_missing_local_file_names_the_path(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(DATA_ROOT_ENV, str(tmp_path))
    with pytest.raises(DatasetConfigError, match="not found"):
        load_dataset({**WIKIBIO_CFG, "source": "local"})


def test_wikibio_row_missing_a_field_names_row_and_field(monkeypatch, tmp_path) -> None:
    (tmp_path / "wb.json").write_text('{"evaluation": [{"gpt3_text": "x"}]}')
    monkeypatch.setenv(DATA_ROOT_ENV, str(tmp_path))
    with pytest.raises(RecordError, match=r"'wikibio-000', field 'wiki_bio_text'"):
        load_dataset({**WIKIBIO_CFG, "source": "local", "local_file": "wb.json"})


def test_unknown_loader_is_rejected() -> None:
    with pytest.raises(DatasetConfigError, match=r"dataset\.loader"):
        load_dataset({"loader": "csv"})


def test_limit_keeps_the_first_records() -> None:
    records, provenance = load_dataset({"loader": "jsonl", "path": str(TOY), "limit": 2})
    assert [p.id for p in records] == ["toy-curie", "toy-turing"]
    assert provenance["source"] == "jsonl" and len(provenance["sha256"]) == 64


def test_a_random_limit_is_seeded_kept_in_file_order_and_its_order_is_checked() -> None:
    base = {"loader": "jsonl", "path": str(TOY), "limit": 3, "limit_order": "random"}
    everything, _ = load_dataset({"loader": "jsonl", "path": str(TOY)})
    first, provenance = load_dataset({**base, "limit_seed": 0})
    again, _ = load_dataset({**base, "limit_seed": 0})
    order = [p.id for p in everything]
    assert [p.id for p in first] == [p.id for p in again] and len(first) == 3
    assert [order.index(p.id) for p in first] == sorted(order.index(p.id) for p in first)
    assert provenance["limit"] == 3 and provenance["limit_order"] == "random"
    seeds = {tuple(p.id for p in load_dataset({**base, "limit_seed": seed})[0]) for seed in range(10)}
    assert len(seeds) > 1
    with pytest.raises(DatasetConfigError, match=r"dataset\.limit_order"):
        load_dataset({**base, "limit_order": "shuffle"})


def test_select_samples_slices_and_names_short_records(toy_passages) -> None:
    record = toy_passages[0]
    assert select_samples(record, 2) == record.samples[:2]
    assert select_samples(record, None) == record.samples
    with pytest.raises(RecordError, match="toy-curie"):
        select_samples(record, 50)


@pytest.mark.parametrize(
    ("dataset", "fetch"),
    [("factualbio", "factualbio"), ("nq_open", "sac3_qa_halu"), ("concept7", "concept7")],
)
def test_a_data_set_without_its_local_copy_names_the_fetch_command(monkeypatch, tmp_path, dataset, fetch) -> None:
    """No data root, then a data root without the file: both errors say which `hallulab data
    fetch` gets the data set (or names the file to put by hand)."""
    from hallulab.core.config import dataset_config

    monkeypatch.delenv(DATA_ROOT_ENV, raising=False)
    with pytest.raises(DatasetConfigError, match=f"hallulab data fetch {fetch}"):
        load_dataset(dataset_config(dataset))
    if dataset != "concept7":  # Concept-7 names its missing files itself
        monkeypatch.setenv(DATA_ROOT_ENV, str(tmp_path))
        with pytest.raises(DatasetConfigError, match=f"hallulab data fetch {fetch}"):
            load_dataset(dataset_config(dataset))
