"""Semantic Entropy: parity with lm-polygraph 0.7.0's ``SemanticEntropy``, its classes built by
lm-polygraph's own ``SemanticClassesCalculator`` from the same NLI classes, at both class
probability readings, both entropy estimators and two values of N; and the clustering rule."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from hallulab.core.config import compose
from hallulab.data.schema import Record
from hallulab.methods.semantic_entropy import SPEC
from hallulab.methods.semantic_entropy.aggregate import (
    aggregate,
    farquhar_entropy,
    semantic_entropy,
)
from hallulab.methods.semantic_entropy.pairs import equivalent as farquhar_equivalent
from hallulab.methods.semantic_entropy.raw import RecordSamples, SemanticEntropyScores
from hallulab.methods.semantic_entropy.score import nli_grids, pair_grid
from hallulab.pipeline.context import AggregateContext
from hallulab.pipeline.params import ParamsView
from hallulab.text.semantic_classes import cluster_by_bidirectional_entailment, cluster_by_leaders, cluster_entropy

N_MAX = 10


def _records(count: int, seed: int) -> dict[str, RecordSamples]:
    """Samples drawn from 1-4 planted meanings; same-meaning pairs entail each other except
    where one direction is dropped, other pairs are neutral or contradict: the greedy leader
    rule then matters (a one-way pair opens a class of its own)."""
    rng = np.random.default_rng(seed)
    records: dict[str, RecordSamples] = {}
    for r in range(count):
        meaning = rng.integers(0, rng.integers(1, 5), size=N_MAX)
        classes = np.where(rng.random((N_MAX, N_MAX)) < 0.5, 1, 2)
        same = meaning[:, None] == meaning[None, :]
        classes[same & (rng.random((N_MAX, N_MAX)) > 0.15)] = 0
        np.fill_diagonal(classes, 0)
        log_probs = rng.normal(-12.0, 5.0, size=N_MAX)
        records[f"r{r}"] = {"log_probs": [float(v) for v in log_probs], "classes": classes.tolist()}
    return records


def _ours(by_record: dict[str, RecordSamples], reading: str, estimation: str, n: int | None) -> np.ndarray:
    records = [Record(id=rid, prompt="q", response="a", sentences=("a",), samples=("s",) * N_MAX) for rid in by_record]
    raw = SemanticEntropyScores(
        nli={"name": "t"}, proxy={"name": "t"}, nli_input="answer", prefix="{prompt}", records=by_record, diagnostics={}
    )
    overrides = [
        f"semantic_entropy.aggregate.class_probability=[{reading}]",
        f"semantic_entropy.aggregate.entropy_estimation={estimation}",
        f"samples.used={'null' if n is None else n}",
    ]
    view = ParamsView(compose(overrides), SPEC.aggregate.param_keys(), "aggregate_semantic_entropy")
    frame = aggregate(AggregateContext("t", records, {}, raw, view)).scores
    assert list(frame["variant"].unique()) == [f"se_{reading}"]
    return frame.set_index("record_id").loc[list(by_record), "score"].to_numpy()


def _lm_polygraph(records: dict[str, RecordSamples], reading: str, estimation: str, n: int) -> np.ndarray:
    from lm_polygraph.estimators.semantic_entropy import SemanticEntropy
    from lm_polygraph.stat_calculators.semantic_classes import SemanticClassesCalculator

    texts = [[f"{rid}:{j}" for j in range(n)] for rid in records]
    matrix = np.array([np.asarray(rec["classes"])[:n, :n] for rec in records.values()])
    stats: dict = {
        "sample_texts": texts,
        "sample_log_probs": [rec["log_probs"][:n] for rec in records.values()],
        "semantic_matrix_classes": matrix,
        "entailment_id": 0,
    }
    stats.update(SemanticClassesCalculator()(stats, texts=[], model=None))
    return SemanticEntropy(class_probability_estimation=reading, entropy_estimation=estimation)(stats)


@pytest.mark.reference
@pytest.mark.parametrize("reading", ["sum", "frequency"])
@pytest.mark.parametrize("estimation", ["mean", "direct"])
def test_semantic_entropy_equals_lm_polygraphs_estimator(reading: str, estimation: str) -> None:
    records = _records(40, seed=3)
    for n in (4, N_MAX):
        expected = _lm_polygraph(records, reading, estimation, n)
        got = _ours(records, reading, estimation, None if n == N_MAX else n)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10)
    # the input separates what it must: N changes the scores, and the classes are neither all
    # one nor all singletons, so a wrong class rule or a wrong N could not pass
    assert not np.allclose(_ours(records, reading, estimation, 4), _ours(records, reading, estimation, None))
    sizes = [max(cluster_by_bidirectional_entailment(np.asarray(r["classes"]) == 0)) + 1 for r in records.values()]
    assert 1 in sizes and max(sizes) >= 4 and any(1 < s < N_MAX for s in sizes)


def test_classes_need_entailment_both_ways_and_the_discrete_reading_is_the_cluster_entropy() -> None:
    entails = np.array(
        [
            [True, True, True, False],
            [True, True, False, False],
            [False, True, True, False],  # 2 is entailed by 0 but does not entail 0: its own class
            [False, False, False, True],
        ]
    )
    labels = cluster_by_bidirectional_entailment(entails)
    assert labels == [0, 0, 1, 2]
    assert semantic_entropy(labels, None, "mean") == pytest.approx(cluster_entropy(labels))
    assert cluster_entropy(labels) == pytest.approx(-(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25)))
    # sum reading: class 0 holds two samples of probability e^-1 each
    log_probs = [-1.0, -1.0, -2.0, -3.0]
    class_lp = [math.log(2 * math.exp(-1.0)), -2.0, -3.0]
    expected = -(2 * class_lp[0] + class_lp[1] + class_lp[2]) / 4
    assert semantic_entropy(labels, log_probs, "mean") == pytest.approx(expected)
    assert semantic_entropy([0, 0, 0], None, "mean") == 0.0


def test_the_nli_reads_every_ordered_pair_and_the_question_only_when_asked() -> None:
    record = Record(id="p", prompt="Who?", response="a", sentences=("a",), samples=("x", "y", "z"))
    premises, hypotheses = pair_grid([record], "answer")
    assert list(zip(premises, hypotheses, strict=True)) == [
        ("x", "y"),
        ("x", "z"),
        ("y", "x"),
        ("y", "z"),
        ("z", "x"),
        ("z", "y"),
    ]
    premises, _ = pair_grid([record], "question_answer")
    assert premises[0] == "Who? x"


# ---- Farquhar et al.'s reading (se_farquhar) ------------------------------------------------

E, N, C = 0, 1, 2  # the NLI classes the score step stores


def test_farquhars_equivalence_holds_unless_one_answer_contradicts_the_other() -> None:
    """Farquhar et al.'s released ``get_semantic_ids`` (``strict_entailment=False``): two
    answers are equivalent when neither direction is a contradiction and not both are neutral;
    ``bidirectional`` is Kuhn et al.'s rule (its ``strict_entailment=True``)."""
    assert farquhar_equivalent(E, N, "no_contradiction") and farquhar_equivalent(N, E, "no_contradiction")
    assert not farquhar_equivalent(N, N, "no_contradiction")
    assert not farquhar_equivalent(E, C, "no_contradiction") and not farquhar_equivalent(C, E, "no_contradiction")
    assert farquhar_equivalent(E, E, "bidirectional") and not farquhar_equivalent(E, N, "bidirectional")


def test_farquhars_clusters_join_the_last_equivalent_leader() -> None:
    """The released loop gives each leader every later answer equivalent to it, so an answer
    equivalent to two leaders ends in the later one's class (Kuhn et al.'s rule and
    lm-polygraph's keep the first)."""
    equivalent = {(0, 2), (1, 2)}  # 0 and 1 are not equivalent; 2 is equivalent to both

    def rule(i: int, leader: int) -> bool:
        return (leader, i) in equivalent

    assert cluster_by_leaders(3, rule) == [0, 1, 0]
    assert cluster_by_leaders(3, rule, join="last") == [0, 1, 1]


def test_farquhars_entropy_reads_length_normalised_likelihoods_normalised_over_the_samples() -> None:
    """compute_uncertainty_measures.py: each answer's log-likelihood is the mean of its token
    log-likelihoods; a class's log-probability is the logsumexp of its answers' values minus the
    logsumexp over all answers (``sum_normalized``); the entropy is -sum_c p_c log p_c
    (``predictive_entropy_rao``)."""
    labels = [0, 0, 1]
    log_probs, counts = [-2.0, -6.0, -3.0], [2, 3, 1]  # means -1, -2, -3
    means = np.array([-1.0, -2.0, -3.0])
    total = np.logaddexp.reduce(means)
    p0 = math.exp(np.logaddexp(means[0], means[1]) - total)
    expected = -(p0 * math.log(p0) + (1 - p0) * math.log(1 - p0))
    assert farquhar_entropy(labels, log_probs, counts) == pytest.approx(expected)
    # the per-sample Monte-Carlo mean over the summed log-probabilities (lm-polygraph's) differs
    assert semantic_entropy(labels, log_probs, "mean") != pytest.approx(expected)


def test_the_farquhar_rows_cluster_the_question_conditioned_classes_by_each_rule() -> None:
    """se_farquhar reads the classes the score step stored for question + answer texts, with the
    equivalence their command line runs by default (``--strict_entailment``: entailment both
    ways), and the samples' length-normalised log-likelihoods; se_farquhar_nocontra, the looser
    rule of ``get_semantic_ids``'s own default (no contradiction, not both neutral), labelled;
    se_sum and se_frequency keep lm-polygraph's reading of the answer-only classes."""
    answers_only = [[E, C, C], [C, E, C], [C, C, E]]  # three meanings without the question
    with_question = [[E, E, N], [N, E, N], [N, N, E]]  # 0 ~ 1 (entail / neutral), 2 apart
    stored: RecordSamples = {
        "log_probs": [-2.0, -6.0, -3.0],
        "classes": answers_only,
        "token_counts": [2, 3, 1],
        "question_classes": with_question,
    }
    records = [Record(id="r", prompt="q", response="a", sentences=("a",), samples=("s",) * 3)]
    raw = SemanticEntropyScores(
        nli={"name": "t"},
        proxy={"name": "t"},
        nli_input="answer",
        prefix="{prompt}",
        records={"r": stored},
        diagnostics={},
    )
    view = ParamsView(compose([]), SPEC.aggregate.param_keys(), "aggregate_semantic_entropy")
    aggregated = aggregate(AggregateContext("t", records, {}, raw, view))
    scores = aggregated.scores.set_index("variant")["score"]
    strict, loose = [0, 1, 2], [0, 0, 1]  # 0 entails 1, 1 does not entail 0
    assert scores["se_farquhar"] == pytest.approx(farquhar_entropy(strict, [-2.0, -6.0, -3.0], [2, 3, 1]))
    assert scores["se_farquhar_nocontra"] == pytest.approx(farquhar_entropy(loose, [-2.0, -6.0, -3.0], [2, 3, 1]))
    assert scores["se_farquhar"] != pytest.approx(scores["se_farquhar_nocontra"])
    assert scores["se_frequency"] == pytest.approx(math.log(3))  # three answer-only classes
    assert aggregated.diagnostics["mean_semantic_classes_farquhar"] == 3.0
    assert aggregated.diagnostics["mean_semantic_classes_farquhar_nocontra"] == 2.0
    assert aggregated.diagnostics["farquhar_equivalences"] == {
        "se_farquhar": "bidirectional",
        "se_farquhar_nocontra": "no_contradiction",
    }
    assert "farquhar_equivalence" not in compose([])["semantic_entropy"]["aggregate"]  # both rules, always
    assert "se_farquhar" in SPEC.benchmark_variants


def test_the_score_step_asks_the_nli_for_question_conditioned_pairs_only_when_it_needs_them() -> None:
    record = Record(id="p", prompt="Who?", response="a", sentences=("a",), samples=("x", "y"))
    assert set(nli_grids([record], "answer", farquhar=True)) == {"answer", "question_answer"}
    assert set(nli_grids([record], "answer", farquhar=False)) == {"answer"}
    assert set(nli_grids([record], "question_answer", farquhar=True)) == {"question_answer"}
    assert nli_grids([record], "answer", farquhar=True)["question_answer"][0] == ["Who? x", "Who? y"]


def test_the_docs_say_the_mean_is_lm_polygraphs_not_kuhn_et_als() -> None:
    """lm-polygraph's ``mean`` is a per-sample Monte-Carlo mean of summed log-probabilities;
    Kuhn et al.'s released estimator (``get_predictive_entropy_over_concepts``) reads
    length-normalised log-likelihoods and averages over classes. Equality with lm-polygraph holds
    downstream of the log-probabilities and classes."""
    root = Path(__file__).resolve().parents[1]
    for path in (
        root / "README.md",
        root / "docs" / "papers" / "semantic-entropy.md",
        root / "src" / "hallulab" / "methods" / "semantic_entropy" / "__init__.py",
        root / "src" / "hallulab" / "methods" / "semantic_entropy" / "aggregate.py",
        root / "conf" / "method" / "semantic_entropy.yaml",
    ):
        text = " ".join(path.read_text(encoding="utf-8").split())
        assert "Kuhn et al.'s Monte-Carlo estimate" not in text, path
        assert "mean: Kuhn et al.'s" not in text, path
        for piece in re.split(r"(?<=[.;|])\s", text):
            if re.search(r"equal(s)? (to )?lm-polygraph's `?SemanticEntropy", piece):
                assert "downstream" in piece, f"{path.name}: {piece[:160]}"
