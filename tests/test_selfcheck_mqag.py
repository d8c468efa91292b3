"""MQAG scoring equals the released rules; the LLM-substitute parsers handle every reply shape."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from hallulab.core.token_stats import TokenStats
from hallulab.core.units import sentence_scores
from hallulab.methods.selfcheck_mqag.knobs import MQAGScoringKnobs
from hallulab.methods.selfcheck_mqag.raw import MQAGQuestion, StoredMQAG
from hallulab.methods.selfcheck_mqag.roles import (
    first_token_distribution,
    parse_distractors,
    parse_question,
    shuffled_options,
)
from hallulab.methods.selfcheck_mqag.scoring import aggregate, question_score


def _random_question(rng: np.random.Generator, samples: int) -> MQAGQuestion:
    p = rng.dirichlet(np.ones(4), size=samples + 1)
    u = rng.uniform(size=samples + 1)
    return MQAGQuestion("q?", ("a", "b", "c", "d"), 0, p[0], float(u[0]), p[1:], u[1:])


@pytest.mark.reference
def test_scores_equal_the_reference_functions_on_random_questions() -> None:
    reference = importlib.import_module("selfcheckgpt.modeling_selfcheck")
    rng = np.random.default_rng(0)
    scoring = MQAGScoringKnobs(beta1=0.8, beta2=0.7, answerability_threshold=0.4)
    for _ in range(300):
        samples = int(rng.integers(0, 8))
        q = _random_question(rng, samples)
        args = (q.p_response, q.u_response, q.p_samples, q.u_samples, samples)
        assert question_score(q, "counting", scoring) == pytest.approx(reference.method_simple_counting(*args, AT=0.4))
        assert question_score(q, "bayes", scoring) == pytest.approx(
            reference.method_vanilla_bayes(*args, beta1=0.8, beta2=0.7, AT=0.4)
        )
        assert question_score(q, "bayes_with_alpha", scoring) == pytest.approx(
            reference.method_bayes_with_alpha(*args, beta1=0.8, beta2=0.7)
        )


def test_sentence_is_the_mean_over_questions_and_n_restricts_samples() -> None:
    rng = np.random.default_rng(1)
    questions = [_random_question(rng, 6) for _ in range(3)]
    stored = StoredMQAG({"roles": "test"}, {"p": [questions, []]})
    scoring = MQAGScoringKnobs()
    first_two, diagnostics = aggregate(stored, scoring, lambda pid, n: np.arange(2))
    expected = np.mean([question_score(q.restricted(np.arange(2)), "bayes", scoring) for q in questions])
    assert sentence_scores(first_two, "mqag_bayes")["p"] == pytest.approx([expected, 0.5])
    assert diagnostics["sentences_without_questions"] == 1
    round_trip = StoredMQAG.from_dict(stored.to_dict())
    np.testing.assert_allclose(round_trip.questions["p"][0][1].p_samples, questions[1].p_samples)
    with pytest.raises(
        ValueError, match=r"mqag.json: not the stored scores of StoredMQAG \(missing \[\], unknown \['question'\]"
    ):
        StoredMQAG.from_dict({**stored.to_dict(), "question": {}}, "mqag.json")


def test_parsers() -> None:
    assert parse_question("Question: Where was she born?\nAnswer: Warsaw") == ("Where was she born?", "Warsaw")
    assert parse_question("question - Who? answer - Me\nmore") == ("Who?", "Me")
    assert parse_question("I cannot write a question.") is None
    assert parse_distractors("1. Paris\n2) Warsaw\n- Vienna\n* Paris\n5. Rome", "warsaw") == ["Paris", "Vienna", "Rome"]
    options, index = shuffled_options("Warsaw", ["Paris"], seed=3)
    assert len(options) == 4 and options[index] == "Warsaw" and sorted(options).count("Paris") == 3
    token = TokenStats("B", -0.1, top=(("B", -0.1), (" A", -2.0), ("b.", -3.0), ("Hello", -1.0)))
    distribution = first_token_distribution([token], ("A", "B", "C", "D"))
    assert distribution is not None and distribution.argmax() == 1 and distribution[2] == 0.0
    assert distribution.sum() == pytest.approx(1.0)
    assert first_token_distribution([TokenStats("Hi", -0.1, top=(("Hi", -0.1),))], ("yes", "no")) is None


@pytest.mark.model
def test_a_resumed_run_counts_every_llm_call_of_the_substitute_once(tmp_path) -> None:
    """The substitute's A and U prompts are LLM calls the call cache keeps and counts: a second
    run served from the cache still counts each of them (at its recorded seconds), so a resumed
    benchmark cell's cost is its whole cost; no second cache over A and U hides them."""
    from hallulab.core.call_cache import CallCache
    from hallulab.core.config import compose
    from hallulab.data.schema import Record
    from hallulab.llm import build_llm
    from hallulab.llm.cached import CachedLLM
    from hallulab.llm.prompts import load_prompt
    from hallulab.methods.selfcheck_mqag.questions import build_questions
    from hallulab.methods.selfcheck_mqag.roles import ROLE_PROMPTS, LLMRoles

    backend = build_llm({**compose()["llm_catalogue"]["smollm2"], "num_threads": 1})
    prompts = {role: load_prompt(f"mqag_{role}") for role in ROLE_PROMPTS}
    sentence = "Marie Curie was born in Warsaw in 1867."
    passage = Record(
        id="curie",
        response=sentence,
        sentences=(sentence,),
        samples=("Marie Curie was born in Paris.", "Curie was born in Warsaw, Poland."),
    )
    label = "qa LLM (smollm2)"

    def run() -> tuple[int, dict[str, float | int]]:
        with CallCache(tmp_path / "calls.sqlite") as cache:
            roles = LLMRoles(CachedLLM(backend, cache, progress=label), prompts)
            stored = build_questions([passage], roles, num_questions=3, seed=0, cache=cache)
            return int(stored.diagnostics["questions_valid"]), cache.stats.requests[label].as_dict()

    valid, first = run()
    assert valid >= 1  # the seeded questions parse, so A and U were asked
    asked = 3 + valid + 2 * valid * (1 + len(passage.samples))  # G1, G2, then A and U on R and each sample
    assert first["calls"] == first["computed"] == asked
    again_valid, second = run()
    assert again_valid == valid
    assert second["calls"] == asked and second["computed"] == 0
    assert second["model_seconds"] == pytest.approx(first["model_seconds"], rel=1e-6)
