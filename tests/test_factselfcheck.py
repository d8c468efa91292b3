"""FactSelfCheck's equations on hand-built graphs and samples, and the extractors' parsing."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from hallulab.artifacts.knowledge_graphs import Triple, normalise
from hallulab.artifacts.knowledge_graphs.build import sentence_graphs
from hallulab.artifacts.knowledge_graphs.parsing import parse_json_list, parse_triples
from hallulab.data.schema import Record
from hallulab.methods.factselfcheck.raw import FactSelfCheckScores
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
    from hallulab.core.units import sentence_scores
    from hallulab.data.schema import Record
    from hallulab.methods.factselfcheck import SPEC
    from hallulab.methods.factselfcheck.aggregate import aggregate
    from hallulab.pipeline.context import AggregateContext
    from hallulab.pipeline.params import ParamsView

    record = Record(id="p", response="A. B.", sentences=["A.", "B."], samples=["s1", "s2"])
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
    raw = FactSelfCheckScores.from_dict(
        {
            "llm_variants": ["text"],
            "llm_records": ["p"],
            "evaluator": "smollm2",
            "answers": {"text": {"p": [[1.0, 1.0], [1.0, 1.0]]}},
            "no_probabilities": {"text": {"p": [[0.2, 0.4], [0.9, None]]}},
        }
    )
    params = {
        "factselfcheck": {"aggregate": {"aggregations": ["max"], "random_seed": 0}},
        "samples": {"used": None, "selection": "first", "seed": 0},
    }
    view = ParamsView(params, SPEC.aggregate.param_keys(), "aggregate_factselfcheck")
    done = aggregate(AggregateContext("t", [record], {"knowledge_graphs": graphs}, raw, view))
    assert sentence_scores(done.scores, "fsc_text_max")["p"] == pytest.approx([1.0, 1.0])
    assert sentence_scores(done.scores, "fsc_text_pno_max")["p"] == pytest.approx([0.3, 0.9])  # None left out
    assert sentence_scores(done.scores, "fsc_kg_freq_max")["p"] == pytest.approx([0.0, 1.0])


def test_a_given_claim_scores_through_its_triples_and_a_claim_without_triples_scores_half() -> None:
    """FactualBio's labelled facts: claim i takes the max / mean of its triples' scores (Eq. 11
    applied to a claim), 0.5 without triples; claim triples are scored like sentence triples."""
    from hallulab.core.units import level_rows
    from hallulab.data.schema import GivenClaim, Record
    from hallulab.methods.factselfcheck import SPEC
    from hallulab.methods.factselfcheck.aggregate import aggregate
    from hallulab.pipeline.context import AggregateContext
    from hallulab.pipeline.params import ParamsView

    nobel = Triple.of("Marie Curie", "won", "Nobel Prize")
    claims = (GivenClaim("Curie was born in Warsaw.", 0.0), GivenClaim("She won a Nobel Prize.", 0.0), GivenClaim("?"))
    record = Record(id="p", response="A.", sentences=["A."], samples=["s1", "s2"], claims=claims)
    graphs = {
        "records": {
            "p": {
                "entities": [],
                "relations": [],
                "sentence_kgs": [[CURIE.to_list()]],
                "sample_kgs": [[CURIE.to_list(), nobel.to_list()], [CURIE.to_list()]],
                "claim_kgs": [[CURIE.to_list(), VIENNA.to_list()], [nobel.to_list()], []],
            }
        }
    }
    raw = FactSelfCheckScores(llm_variants=[], llm_records=[], evaluator=None, answers={})
    params = {
        "factselfcheck": {"aggregate": {"aggregations": ["max", "mean"], "random_seed": 0}},
        "samples": {"used": None, "selection": "first", "seed": 0},
    }
    view = ParamsView(params, SPEC.aggregate.param_keys(), "aggregate_factselfcheck")
    done = aggregate(AggregateContext("t", [record], {"knowledge_graphs": graphs}, raw, view))

    def claim_scores(variant: str) -> list[float]:
        rows = level_rows(done.scores, variant, "claim").sort_values("unit_index")
        return [float(s) for s in rows["score"]]

    # H(curie) = 0, H(vienna) = 1, H(nobel) = 1 - 1/2
    assert claim_scores("fsc_kg_freq_max") == pytest.approx([1.0, 0.5, 0.5])
    assert claim_scores("fsc_kg_freq_mean") == pytest.approx([0.5, 0.5, 0.5])
    assert done.diagnostics["fsc_kg_freq_max_claims_without_facts"] == 1
    # the sentence level is unchanged by the claims; the claims' triples are not sentence facts
    assert len(level_rows(done.scores, "fsc_kg_freq", "fact")) == 1


def test_the_spacy_extractor_breaks_given_claims_into_triples(tmp_path: Path) -> None:
    """A given claim is parsed like a sentence; its heads and tails join the samples' allowed
    sets, so a sample stating the claim's fact keeps it."""
    from hallulab.artifacts.knowledge_graphs import SPEC, graphs_by_record
    from hallulab.artifacts.knowledge_graphs.build import build
    from hallulab.core.call_cache import CallCache
    from hallulab.core.config import compose
    from hallulab.data.schema import GivenClaim, Record
    from hallulab.pipeline.context import BuildContext
    from hallulab.pipeline.params import ParamsView
    from hallulab.pipeline.resources import Resources

    record = Record(
        id="p",
        response="Marie Curie was a physicist. She discovered polonium.",
        sentences=["Marie Curie was a physicist.", "She discovered polonium."],
        samples=["Marie Curie discovered radium.", "Marie Curie discovered polonium."],
        claims=(GivenClaim("Marie Curie discovered radium.", 1.0), GivenClaim("Curie was a physicist.", 0.0)),
    )
    view = ParamsView(compose(overrides=["knowledge_graphs.extractor=spacy"]), SPEC.inputs.param_keys(), "kg")
    with CallCache(tmp_path / "c.sqlite") as cache:
        out = build(BuildContext("t", [record], {}, view, Resources(view, cache)))
    graph = graphs_by_record(out)["p"]
    radium = Triple.of("Marie Curie", "discover", "radium")
    assert radium in graph.claim_kgs[0] and radium in graph.passage_kg
    assert radium in graph.sample_kgs[0]  # kept: the claim's tail is an allowed entity
    assert "facts_per_claim" in out["table8"]


def test_llm_sentence_triples_are_unrestricted_and_extend_the_sample_sets() -> None:
    """Eq. 4-5 and footnote 3: a sentence triple naming an entity or relation outside E_p / R_p
    is kept, and its parts join E_S / R_S, so a sample triple stating it is kept too."""
    record = Record(id="p", response="Curie won a Nobel Prize.", sentences=("Curie won a Nobel Prize.",))
    counts: Counter[str] = Counter()
    replies = iter(["subject;relation;object\nMarie Curie;won;Nobel Prize in Physics\nCurie;won;Nobel Prize"])
    sentence_kgs, claim_kgs, (entities, relations) = sentence_graphs(
        record, ["Curie", "Nobel Prize"], ["won"], replies, counts
    )
    assert Triple.of("Marie Curie", "won", "Nobel Prize in Physics") in sentence_kgs[0]
    assert Triple.of("Curie", "won", "Nobel Prize") in sentence_kgs[0] and claim_kgs == []
    assert counts["sentence_triples_extending_sets"] == 1
    allowed = {normalise(e) for e in entities}
    assert {"marie_curie", "nobel_prize_in_physics"} <= allowed and relations == ["won"]
    sample = parse_triples("Marie Curie;won;Nobel Prize in Physics", entities, relations, counts)
    assert sample == [Triple.of("Marie Curie", "won", "Nobel Prize in Physics")]
