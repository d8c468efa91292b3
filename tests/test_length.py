"""Unit length, the trivial baseline: its token count, the units it scores at every level,
its direction under the evaluation protocol, and on the real data sets the levels the
evaluation gives it, which are the benchmark cell's."""

from __future__ import annotations

import math

import pytest

from hallulab.benchmark.applicability import applicability, benchmark_datasets
from hallulab.core.config import dataset_config
from hallulab.data.loaders import load_dataset
from hallulab.data.schema import Record, record_from_dict
from hallulab.evaluation.levels import evaluate_levels
from hallulab.evaluation.protocol import ProtocolKnobs
from hallulab.methods.length import SPEC
from hallulab.methods.length.aggregate import VARIANT, aggregate, score_units
from hallulab.methods.length.tokens import token_count, tokens
from hallulab.pipeline import registry
from hallulab.pipeline.context import AggregateContext
from hallulab.pipeline.params import ParamsView
from tests.conftest import requires_data_root

NO_BOOTSTRAP = ProtocolKnobs(bootstrap_samples=0)


def test_tokens_are_word_runs_and_single_other_characters() -> None:
    assert tokens("Marie Curie was born in Warsaw in 1867.") == [
        "Marie", "Curie", "was", "born", "in", "Warsaw", "in", "1867", ".",
    ]  # fmt: skip
    assert tokens("Polish-born, she didn't (1903)!") == [
        "Polish", "-", "born", ",", "she", "didn", "'", "t", "(", "1903", ")", "!",
    ]  # fmt: skip
    assert tokens("Skłodowska–Curie") == ["Skłodowska", "–", "Curie"]  # Unicode letters are word characters
    assert token_count("") == token_count("  \n\t") == 0
    assert token_count("a  b\n\nc") == 3


def test_the_method_is_registered_without_a_model() -> None:
    assert registry.methods()["length"] is SPEC
    assert SPEC.score is None and SPEC.raw is None and SPEC.needs == ()
    assert set(SPEC.scored_levels) == {"claim", "sentence", "response", "prompt"}


def _passage(**fields: object) -> Record:
    return record_from_dict({"id": "r", **fields})


def test_every_unit_a_record_holds_is_scored_by_its_length() -> None:
    answered = _passage(
        id="bio",
        prompt="Who was Marie Curie?",
        response="Marie Curie was a physicist. She was born in Vienna.",
        sentences=["Marie Curie was a physicist.", "She was born in Vienna."],
        claims=[{"text": "Curie was a physicist", "label": 0.0}, {"text": "Curie was born in Vienna", "label": 1.0}],
    )
    asked = _passage(id="concept", prompt="Explain the Fizzbuzz theorem.", response=None)
    frame = score_units([answered, asked])[0].frame()
    rows = {(r.record_id, r.level, r.unit_index): r.score for r in frame.itertuples()}
    assert rows == {
        ("bio", "claim", 0): 4.0,
        ("bio", "claim", 1): 5.0,
        ("bio", "sentence", 0): 6.0,
        ("bio", "sentence", 1): 6.0,
        ("bio", "response", 0): 12.0,
        ("bio", "prompt", 0): 5.0,
        ("concept", "prompt", 0): 5.0,  # a prompt-only record: the prompt is its one unit
    }
    assert set(frame["variant"]) == {VARIANT}


def test_the_aggregate_step_reads_no_setting_and_counts_what_it_scored() -> None:
    record = _passage(response="One. Two words.", sentences=["One.", "Two words."])
    view = ParamsView({}, SPEC.aggregate.param_keys(), "aggregate_length")
    result = aggregate(AggregateContext("example", [record], {}, None, view))
    assert result.scores["score"].tolist() == [2.0, 3.0, 5.0]
    assert result.diagnostics == {"sentences_scored": 2, "responses_scored": 1, "tokens": r"\w+|[^\w\s]"}


def test_longer_is_more_likely_hallucinated_under_the_protocol() -> None:
    """Where the longer units are exactly the hallucinated ones, every ranking metric is 100 at
    every level: the score's direction is the protocol's (higher = more likely hallucinated)."""
    short, long = "Curie was Polish.", "Curie was born in Vienna in 1871 to a family of seven."
    records = [
        _passage(
            id=f"p{i}",
            prompt=("Explain the made-up Fizzbuzz theorem of Curie in one short paragraph." if i % 2 else "Who?"),
            response=f"{short} {long}" if i % 2 else short,
            sentences=[short, long] if i % 2 else [short],
            labels=["accurate", "major_inaccurate"] if i % 2 else ["accurate"],
            claims=[{"text": short, "label": 0.0}, {"text": long, "label": 1.0}],
            response_label=float(i % 2),
            prompt_label=float(i % 2),
        )
        for i in range(6)
    ]
    results = evaluate_levels(records, score_units(records)[0].frame(), NO_BOOTSTRAP)
    metrics = {level: result.metrics[VARIANT] for level, result in results.items()}
    assert metrics["sentence"]["roc_auc"] == metrics["sentence"]["nonfact_aucpr"] == 100.0
    assert metrics["sentence"]["factual_aucpr"] == 100.0  # the protocol reverses the score for it
    assert metrics["sentence"]["passage_pearson"] > 0
    assert metrics["claim"]["claim_roc_auc"] == metrics["response"]["response_roc_auc"] == 100.0
    assert metrics["prompt"]["prompt_auc"] == 100.0


BENCHMARK = ("concept7", "factualbio", "hotpotqa", "nq_open", "wikibio")


@pytest.fixture(scope="module")
def length_cells() -> dict[str, tuple[str, ...]]:
    cells = applicability(registry.methods(), benchmark_datasets())
    return {c.dataset: c.levels for c in cells if c.method == "length"}


@requires_data_root
@pytest.mark.parametrize("name", BENCHMARK)
def test_on_the_real_data_the_evaluation_gives_the_levels_of_the_benchmark_cell(
    name: str, length_cells: dict[str, tuple[str, ...]]
) -> None:
    records, _ = load_dataset(dataset_config(name))
    results = evaluate_levels(records, score_units(records)[0].frame(), NO_BOOTSTRAP)
    found = set(results)
    if "sentence" in results and math.isfinite(results["sentence"].metrics[VARIANT]["passage_pearson"]):
        found.add("passage")
    assert found == set(length_cells[name])
