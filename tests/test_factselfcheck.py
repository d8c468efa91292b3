"""FactSelfCheck's equations on hand-built graphs and samples, and the extractors' parsing."""

from __future__ import annotations

from collections import Counter

import pytest

from hallulab.artifacts.knowledge_graphs import Triple, normalise
from hallulab.artifacts.knowledge_graphs.parsing import parse_json_list, parse_triples
from hallulab.methods.factselfcheck.scoring import (
    NO_FACT_SENTENCE_SCORE,
    frequency_score,
    graph_text,
    llm_score,
    psi,
    sentence_score,
)

CURIE = Triple.of("Marie Curie", "born in", "Warsaw")
VIENNA = Triple.of("Marie Curie", "born in", "Vienna")


def test_triples_are_normalised_values() -> None:
    assert normalise("  Marie  Curie ") == "marie_curie"
    assert Triple.of(" Marie Curie", "Born In", "WARSAW ") == CURIE
    assert len({CURIE, Triple.of("marie curie", "born in", "warsaw")}) == 1
    assert graph_text([CURIE]) == "(marie curie, born in, warsaw)" and graph_text([]) == "(empty)"


def test_kg_frequency_is_one_minus_the_share_of_samples_holding_the_exact_fact() -> None:
    samples = [[CURIE], [CURIE, VIENNA], [], [Triple.of("Curie", "born in", "Warsaw")]]
    assert frequency_score(CURIE, samples) == pytest.approx(1 - 2 / 4)
    assert frequency_score(VIENNA, samples) == pytest.approx(1 - 1 / 4)
    with pytest.raises(ValueError, match="at least one sample"):
        frequency_score(CURIE, [])


@pytest.mark.parametrize(
    ("reply", "value"),
    [("yes", 0.0), ("Yes.", 0.0), ("No", 1.0), ("no, it is not", 1.0), ("I am not sure", None), ("", None)],
)
def test_psi_reads_yes_then_no_and_anything_else_is_invalid(reply: str, value: float | None) -> None:
    assert psi(reply) == value


def test_llm_scores_average_only_the_valid_answers() -> None:
    assert llm_score([0.0, 1.0, None, 1.0]) == pytest.approx(2 / 3)
    assert llm_score([None, None]) is None


def test_sentences_take_the_max_or_mean_and_a_factless_sentence_scores_half() -> None:
    assert sentence_score([0.2, 0.8], "max") == 0.8
    assert sentence_score([0.2, 0.8], "mean") == pytest.approx(0.5)
    assert sentence_score([], "max") == NO_FACT_SENTENCE_SCORE == 0.5


def test_extractor_replies_are_parsed_and_bad_lines_counted() -> None:
    assert parse_json_list('Here: {"entities": ["Marie Curie", "Warsaw"]}', "entities") == ["Marie Curie", "Warsaw"]
    assert parse_json_list("no json here", "entities") is None
    assert parse_json_list('{"entities": "one"}', "entities") is None
    counts: Counter[str] = Counter()
    reply = (
        "subject;relation;object\nMarie Curie;born in;Warsaw\nbroken line\nMarie Curie;born in;Paris\nX;likes;Warsaw"
    )
    found = parse_triples(reply, ["Marie Curie", "Warsaw", "X"], ["born in"], counts)
    assert found == [CURIE]
    assert counts == Counter({"lines_malformed": 1, "triples_outside_entities": 1, "triples_outside_relations": 1})
    refused: Counter[str] = Counter()
    assert parse_triples("I'm sorry, I can't help with that.", None, None, refused) == []
    assert refused["replies_refused"] == 1


def test_aggregate_reads_the_stored_no_probabilities_as_the_format_free_variant() -> None:
    """An evaluator that always answers "No" ties every fact at 1; its P(No) shares still rank."""
    from hallulab.data.schema import Passage
    from hallulab.methods.factselfcheck import SPEC
    from hallulab.methods.factselfcheck.aggregate import aggregate
    from hallulab.pipeline.context import AggregateContext
    from hallulab.pipeline.params import ParamsView
    from hallulab.units import sentence_scores

    passage = Passage(id="p", response="A. B.", sentences=["A.", "B."], samples=["s1", "s2"])
    graphs = {
        "records": {
            "p": {
                "entities": [],
                "relations": [],
                "sentence_kgs": [[CURIE.to_list()], [VIENNA.to_list()]],
                "sample_kgs": [[CURIE.to_list()], [CURIE.to_list()]],
            }
        }
    }
    raw = {
        "llm_variants": ["text"],
        "llm_records": ["p"],
        "answers": {"text": {"p": [[1.0, 1.0], [1.0, 1.0]]}},
        "no_probabilities": {"text": {"p": [[0.2, 0.4], [0.9, None]]}},
    }
    params = {
        "factselfcheck": {"aggregate": {"aggregations": ["max"], "random_seed": 0}},
        "selfcheck": {"num_samples": None},
    }
    view = ParamsView(params, SPEC.aggregate.param_keys(), "aggregate_factselfcheck")
    done = aggregate(AggregateContext("t", [passage], {"knowledge_graphs": graphs}, raw, view))
    assert sentence_scores(done.scores, "fsc_text_max")["p"] == pytest.approx([1.0, 1.0])
    assert sentence_scores(done.scores, "fsc_text_pno_max")["p"] == pytest.approx([0.3, 0.9])  # None left out
    assert sentence_scores(done.scores, "fsc_kg_freq_max")["p"] == pytest.approx([0.0, 1.0])
