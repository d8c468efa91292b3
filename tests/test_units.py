"""The unit-score table: columns, reductions between levels, Parquet round trip."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from hallulab.core.units import COLUMNS, ScoreTable, record_scores, reduce_to, sentence_scores
from hallulab.pipeline.runner import write_table


def _facts() -> pd.DataFrame:
    table = ScoreTable()
    table.add("kg", "fact", "p", 0, 0.2, sentence_index=0)
    table.add("kg", "fact", "p", 1, 0.8, sentence_index=0)
    table.add("kg", "fact", "p", 2, 0.4, sentence_index=2)
    return table.frame()


def test_columns_and_dtypes() -> None:
    frame = _facts()
    assert tuple(frame.columns) == COLUMNS
    assert frame["unit_id"].tolist() == ["p#fact0", "p#fact1", "p#fact2"]
    assert str(frame["sentence_index"].dtype) == "Int64" and frame["start"].isna().all()


def test_facts_reduce_to_sentences_by_max_or_mean_and_a_factless_sentence_gets_the_fallback() -> None:
    by_max = reduce_to(_facts(), "fact", "sentence", "max", sentences_per_record={"p": 3}, empty=0.5)
    assert sentence_scores(by_max, "kg")["p"] == pytest.approx([0.8, 0.5, 0.4])
    by_mean = reduce_to(_facts(), "fact", "sentence", "mean", sentences_per_record={"p": 3}, empty=0.5)
    assert sentence_scores(by_mean, "kg")["p"] == pytest.approx([0.5, 0.5, 0.4])
    response = reduce_to(_facts(), "fact", "response", "mean")
    assert record_scores(response, "kg")["p"] == pytest.approx(1.4 / 3)


def test_nan_is_refused_and_infinity_survives_parquet(tmp_path: Path) -> None:
    table = ScoreTable()
    with pytest.raises(ValueError, match="NaN"):
        table.add("v", "sentence", "p", 0, float("nan"))
    table.add_sentences("v", "p", [math.inf, 1.0], [(0, 3), None])
    write_table(tmp_path / "s.parquet", table.frame())
    again = pd.read_parquet(tmp_path / "s.parquet")
    assert again["score"].tolist() == [math.inf, 1.0] and again["start"].tolist()[0] == 0
