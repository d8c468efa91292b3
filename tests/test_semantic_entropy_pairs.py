"""Semantic Entropy's lazy NLI pairs (:mod:`hallulab.methods.semantic_entropy.pairs`): the score
step scores only the pairs the greedy classes read, yet the classes are lm-polygraph 0.7.0's
(its own ``SemanticMatrixCalculator`` + ``SemanticClassesCalculator`` + ``SemanticEntropy``,
scores equal exactly) and the all-pairs step's, at every N; the pairs of every prefix of the
samples are among the stored ones, so a sweep over ``samples.used`` calls no model; a seeded random
subset asks for every pair; and the pairs Semantic Entropy scored are the pair-matrix artifact's
call-cache entries, so each pair is paid for once.

The NLI model is the word-overlap stand-in of tests/test_reference_parity_graph_uq.py (a fixed
function of the pair's words, asymmetric, with every class), on short answers to a question as
NQ-open's samples are: repeats, paraphrases that entail one way or both, contradicting ones.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest
import yaml

from hallulab.artifacts.nli_pair_matrix import SPEC as PAIR_MATRIX
from hallulab.artifacts.nli_pair_matrix import build as pair_matrix_build
from hallulab.core.call_cache import CallCache
from hallulab.core.config import ConfigError, compose
from hallulab.core.errors import RecordError
from hallulab.core.token_stats import TokenStats
from hallulab.data.schema import Record
from hallulab.methods.semantic_entropy import SPEC
from hallulab.methods.semantic_entropy import score as score_step
from hallulab.methods.semantic_entropy.aggregate import aggregate
from hallulab.methods.semantic_entropy.knobs import ALL_PAIRS, LAZY
from hallulab.methods.semantic_entropy.pairs import (
    FARQUHAR_CLUSTERINGS,
    LM_POLYGRAPH,
    UNSCORED,
    Clustering,
    Pair,
    PairRequest,
    equivalent,
    greedy_classes,
    lazy_class_matrices,
    length_groups,
    stored_classes,
    unscored,
)
from hallulab.methods.semantic_entropy.raw import RecordSamples, SemanticEntropyScores
from hallulab.methods.semantic_entropy.score import nli_classes
from hallulab.nli.scorer import NLIKnobs, NLIScorer
from hallulab.pipeline.context import AggregateContext, BuildContext
from hallulab.pipeline.params import ParamsView
from hallulab.text.semantic_classes import cluster_by_bidirectional_entailment, cluster_by_leaders
from tests.test_reference_parity_graph_uq import _softmax, _stand_in_nli

N_MAX = 10

#: NQ-open-like samples: short answers, repeated, paraphrased (one way or both), contradicting
ANSWERS = {
    "born": (
        "Where was Marie Curie born?",
        (
            "Warsaw",
            "Warsaw",
            "in Warsaw",
            "Warsaw, Poland",
            "Paris",
            "in Warsaw",
            "She was born in Warsaw",
            "Vienna",
            "Paris, France",
            "Warsaw",
        ),
    ),
    "year": (
        "When did she win her first Nobel Prize?",
        ("1903", "in 1903", "1903", "1911", "the year 1903", "1911", "in 1911", "1903", "1903", "in 1903"),
    ),
    "same": ("What is the capital of France?", ("Paris",) * N_MAX),
    "apart": (
        "Name a colour.",
        ("red", "blue", "green", "dark red", "yellow", "blue sky", "black", "white", "red or blue", "grey"),
    ),
    "river": (
        "Which river flows through Warsaw?",
        (
            "the Vistula",
            "Vistula",
            "The Vistula river",
            "the Oder",
            "Vistula",
            "the Vistula river flows through Warsaw",
            "Oder",
            "the Vistula",
            "Danube",
            "the Vistula",
        ),
    ),
}


def _passages() -> list[Record]:
    return [
        Record(id=rid, prompt=question, response=samples[0], sentences=(samples[0],), samples=samples)
        for rid, (question, samples) in ANSWERS.items()
    ]


def _class_probs(premises: list[str], hypotheses: list[str]) -> np.ndarray:
    return np.asarray(_softmax(premises, hypotheses).numpy(), dtype=np.float64)


def _log_probs(record: Record) -> list[float]:
    return [-1.5 * len(sample.split()) - 0.1 * (len(sample) % 5) for sample in record.samples]


def _raw(records: list[Record], pairs: str, nli_input: str = "answer") -> SemanticEntropyScores:
    found = nli_classes(records, nli_input, farquhar=True, pairs=pairs, class_probs=_class_probs)
    by_record: dict[str, RecordSamples] = {
        p.id: {
            "log_probs": list(_log_probs(p)),
            "classes": found.matrices[nli_input][i],
            "token_counts": [len(s.split()) for s in p.samples],
            "question_classes": found.matrices["question_answer"][i],
        }
        for i, p in enumerate(records)
    }
    return SemanticEntropyScores(
        nli={"name": "stand-in"},
        proxy={"name": "stand-in"},
        nli_input=nli_input,
        prefix="{prompt}",
        records=by_record,
        diagnostics={"pairs": found.pairs},
        pairs=pairs,
    )


@functools.cache
def _defaults() -> dict[str, Any]:
    return compose([])


def _params(overrides: list[str]) -> dict[str, Any]:
    """The default params with ``key=value`` settings, as ``-S`` gives them (one Hydra compose
    for the whole file: the aggregate step runs at many settings here)."""
    params = copy.deepcopy(_defaults())
    for override in overrides:
        dotted, value = override.split("=", 1)
        *path, last = dotted.split(".")
        node = params
        for key in path:
            node = node[key]
        assert last in node, dotted
        node[last] = yaml.safe_load(value)
    return params


def _scores(records: list[Record], raw: SemanticEntropyScores, overrides: list[str]) -> pd.DataFrame:
    view = ParamsView(_params(overrides), SPEC.aggregate.param_keys(), "aggregate_semantic_entropy")
    frame = aggregate(AggregateContext("t", records, {}, raw, view)).scores
    return frame.sort_values(["variant", "record_id"]).reset_index(drop=True)


# ---- parity with lm-polygraph, the pairs scored lazily ----------------------------------------


def _lm_polygraph(records: list[Record], n: int, reading: str, estimation: str) -> tuple[np.ndarray, list[list[int]]]:
    """lm-polygraph's entropy and classes of the first n samples, its matrix from the stand-in."""
    from lm_polygraph.estimators.semantic_entropy import SemanticEntropy
    from lm_polygraph.stat_calculators.semantic_classes import SemanticClassesCalculator
    from lm_polygraph.stat_calculators.semantic_matrix import SemanticMatrixCalculator

    stats: dict[str, Any] = {
        "sample_texts": [list(p.samples[:n]) for p in records],
        "sample_log_probs": [_log_probs(p)[:n] for p in records],
    }
    stats |= SemanticMatrixCalculator(_stand_in_nli())(stats, texts=[], model=None)
    stats |= SemanticClassesCalculator()(stats, texts=[], model=None)
    entropy = SemanticEntropy(class_probability_estimation=reading, entropy_estimation=estimation)(stats)
    to_class = stats["semantic_classes_entail"]["sample_to_class"]
    return np.asarray(entropy, dtype=np.float64), [[int(to_class[r][j]) for j in range(n)] for r in range(len(records))]


@pytest.mark.reference
@pytest.mark.parametrize("reading", ["sum", "frequency"])
@pytest.mark.parametrize("estimation", ["mean", "direct"])
def test_the_lazy_pairs_give_lm_polygraphs_classes_and_entropy_exactly(reading: str, estimation: str) -> None:
    records = _passages()
    raw = _raw(records, LAZY)
    for n in (2, 4, 7, N_MAX):
        expected, their_classes = _lm_polygraph(records, n, reading, estimation)
        overrides = [
            f"semantic_entropy.aggregate.class_probability=[{reading}]",
            f"semantic_entropy.aggregate.entropy_estimation={estimation}",
            f"samples.used={n}",
        ]
        frame = _scores(records, raw, overrides)
        frame = frame[frame["variant"] == f"se_{reading}"].set_index("record_id")
        got = frame.loc[[p.id for p in records], "score"].to_numpy(dtype=np.float64)
        assert float(np.abs(got - expected).max()) == 0.0, (n, got, expected)
        ours = [stored_classes(np.asarray(r["classes"]), range(n), LM_POLYGRAPH) for r in raw.records.values()]
        assert ours == their_classes, n
    # the input separates what it must: one class, all singletons, and records in between
    sizes = [max(c) + 1 for c in _lm_polygraph(records, N_MAX, reading, estimation)[1]]
    assert 1 in sizes and N_MAX in sizes and any(1 < s < N_MAX for s in sizes)
    # and the laziness is real: fewer pairs scored than the N (N - 1) of the answers' matrix
    assert raw.diagnostics["pairs"] < len(records) * N_MAX * (N_MAX - 1)


# ---- the lazy classes are the all-pairs classes, at every N, for every rule --------------------


def _reference_classes(full: np.ndarray, clustering: Clustering) -> list[int]:
    """The classes from the complete matrix by the project's plain (non-lazy) greedy rules."""
    if clustering == LM_POLYGRAPH:
        return cluster_by_bidirectional_entailment(full == 0)
    return cluster_by_leaders(
        full.shape[0],
        lambda i, leader: equivalent(int(full[leader, i]), int(full[i, leader]), clustering.rule),
        join="last",
    )


@pytest.mark.parametrize("nli_input", ["answer", "question_answer"])
def test_lazy_and_all_pairs_give_the_same_scores_at_every_n_and_rule(nli_input: str) -> None:
    records = _passages()
    lazy, every = _raw(records, LAZY, nli_input), _raw(records, ALL_PAIRS, nli_input)
    assert lazy.diagnostics["pairs"] < every.diagnostics["pairs"]
    for n in range(1, N_MAX + 1):  # every rule: se_farquhar and se_farquhar_nocontra are written together
        overrides = [f"samples.used={n}"]
        pd.testing.assert_frame_equal(_scores(records, lazy, overrides), _scores(records, every, overrides))
    for lazy_record, full_record in zip(lazy.records.values(), every.records.values(), strict=True):
        for field, clusterings in (("classes", (LM_POLYGRAPH,)), ("question_classes", FARQUHAR_CLUSTERINGS)):
            scored, full = np.asarray(lazy_record[field]), np.asarray(full_record[field])
            assert np.array_equal(scored[scored != UNSCORED], full[scored != UNSCORED])  # same classes where scored
            for clustering in clusterings:
                got = stored_classes(scored, range(N_MAX), clustering)
                assert got == _reference_classes(full, clustering) == stored_classes(full, range(N_MAX), clustering)


# ---- the pairs of a prefix are a subset of the stored pairs ------------------------------------


def _planted(seed: int) -> np.ndarray:
    """A random N_MAX x N_MAX class matrix from 1-4 planted meanings, one-way entailments and
    neutral pairs among them, so that every rule's leaders and joins differ."""
    rng = np.random.default_rng(seed)
    meaning = rng.integers(0, rng.integers(1, 5), size=N_MAX)
    classes = rng.choice([1, 2], size=(N_MAX, N_MAX))
    same = meaning[:, None] == meaning[None, :]
    classes[same] = rng.choice([0, 0, 0, 1], size=int(same.sum()))
    np.fill_diagonal(classes, 0)
    return classes


def _reads(full: np.ndarray, count: int, clustering: Clustering) -> tuple[set[Pair], list[int]]:
    """Every pair the clustering of the first ``count`` samples reads, answered from ``full``."""
    matrix = unscored(count)
    reads = greedy_classes(matrix, clustering)
    asked: set[Pair] = set()
    try:
        needed = next(reads)
        while True:
            for a, b in needed:
                asked.add((a, b))
                matrix[a, b] = full[a, b]
            needed = next(reads)
    except StopIteration as done:
        return asked, list(done.value)


def _sequential_reads(full: np.ndarray, count: int, clustering: Clustering) -> tuple[set[Pair], list[int]]:
    """The pairs the one-sample-at-a-time loop reads, and its classes: lm-polygraph's
    ``_determine_class`` (``forward_entailment and backward_entailment``, leaders in order, the
    first match) or Farquhar et al.'s ``get_semantic_ids`` (every leader, the last match), each
    backward class read only when the forward one leaves the rule undecided."""
    read: set[Pair] = set()
    leaders: list[int] = []
    labels: list[int] = []
    for i in range(count):
        found = []
        for index, leader in enumerate(leaders):
            read.add((leader, i))
            forward = int(full[leader, i])
            undecided = forward == 0 if clustering.rule == "bidirectional" else forward != 2
            if undecided:
                read.add((i, leader))
            if undecided and equivalent(forward, int(full[i, leader]), clustering.rule):
                found.append(index)
                if clustering.join == "first":
                    break
        labels.append(found[-1] if found else len(leaders))
        if not found:
            leaders.append(i)
    return read, labels


CLUSTERINGS = (LM_POLYGRAPH, *FARQUHAR_CLUSTERINGS)


@pytest.mark.parametrize("clustering", CLUSTERINGS, ids=lambda c: f"{c.rule}-{c.join}")
def test_the_pairs_of_every_prefix_are_among_the_pairs_of_the_whole_list(clustering: Clustering) -> None:
    """For each rule alone and for the rules together (as the score step runs them): what the
    clustering of the first N samples reads was scored, and its classes are the complete
    matrix's; a random subset is no prefix and reads pairs that were not scored."""
    unread_by_a_subset = 0
    for seed in range(60):
        full = _planted(seed)
        texts = [f"t{seed}:{j}" for j in range(N_MAX)]

        def answer(premises: list[str], hypotheses: list[str], full: np.ndarray = full) -> np.ndarray:
            rows = [full[int(p.split(":")[1]), int(h.split(":")[1])] for p, h in zip(premises, hypotheses, strict=True)]
            return np.eye(3)[rows]

        alone = lazy_class_matrices([PairRequest(texts, (clustering,))], answer).matrices[0]
        together = lazy_class_matrices([PairRequest(texts, CLUSTERINGS)], answer).matrices[0]
        for scored in (alone, together):
            stored = {(a, b) for a in range(N_MAX) for b in range(N_MAX) if a != b and scored[a, b] != UNSCORED}
            for n in range(1, N_MAX + 1):
                read, labels = _sequential_reads(full, n, clustering)
                assert _reads(full, n, clustering) == (read, labels)  # the parallel rounds read the same
                assert read <= stored, (seed, n)
                assert (
                    labels
                    == stored_classes(scored, range(n), clustering)
                    == _reference_classes(full[:n, :n], clustering)
                )
        asked, _ = _sequential_reads(full, N_MAX, clustering)
        assert asked == {(a, b) for a in range(N_MAX) for b in range(N_MAX) if a != b and alone[a, b] != UNSCORED}
        subset = np.sort(np.random.default_rng(seed).choice(N_MAX, size=5, replace=False))
        try:
            stored_classes(alone, subset, clustering)
        except LookupError:
            unread_by_a_subset += 1
    assert unread_by_a_subset > 0


# ---- a sweep over samples.used calls no model; each pair is paid for once ----------------------


class _StandInScorer(NLIScorer):
    """The NLI scorer with the stand-in in place of a model: its pairs go through the call cache
    under the scorer's own keys, and every pair it computes is counted."""

    identity: ClassVar[dict[str, Any]] = {"model": "stand-in"}  # what the cache keys name; no model is loaded
    computed: ClassVar[list[tuple[str, str]]] = []

    def _classes(self, pairs: list[tuple[str, str]]) -> list[list[float]]:
        type(self).computed.extend(pairs)
        return [[float(v) for v in row] for row in _class_probs([p for p, _ in pairs], [h for _, h in pairs])]


class _Proxy:
    """A white-box proxy whose teacher-forced tokens are the sample's words."""

    capabilities = SimpleNamespace(teacher_forcing=True)
    llm = SimpleNamespace(identity=lambda: SimpleNamespace(as_key=lambda: {"model": "proxy"}))

    def score(self, prefixes: list[str], texts: list[str]) -> list[list[TokenStats]]:
        return [[TokenStats(word, -1.0 - 0.1 * len(word)) for word in text.split()] for text in texts]


def _build(cache: CallCache, step: Callable[[BuildContext], Any], keys: Any, name: str) -> Any:
    view = ParamsView(_params([]), keys, name)
    resources = SimpleNamespace(llm=lambda role: _Proxy(), llm_name=lambda role: "proxy", cache=cache)
    return step(BuildContext("t", _passages(), {}, view, resources))  # type: ignore[arg-type]


def test_a_sweep_over_samples_used_calls_no_model_and_each_pair_is_paid_for_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(score_step, "NLIScorer", _StandInScorer)
    monkeypatch.setattr(pair_matrix_build, "NLIScorer", _StandInScorer)
    monkeypatch.setattr(_StandInScorer, "computed", [])
    records = _passages()
    with CallCache(tmp_path / "calls.sqlite") as cache:
        raw = _build(cache, score_step.score, SPEC.score.param_keys(), "score_semantic_entropy")
        assert raw.pairs == LAZY
        scored_by_se = list(_StandInScorer.computed)
        assert len(scored_by_se) == len(set(scored_by_se))  # no pair scored twice
        used = (cache.stats.hits, cache.stats.misses)
        variants = {"se_sum", "se_frequency", "se_farquhar", "se_farquhar_nocontra"}
        for n in range(1, N_MAX + 1):
            frame = _scores(records, SemanticEntropyScores.from_dict(raw.to_dict()), [f"samples.used={n}"])
            assert set(frame["variant"]) == variants and len(frame) == 4 * len(records)
        assert len(_StandInScorer.computed) == len(scored_by_se) and (cache.stats.hits, cache.stats.misses) == used

        # the pair-matrix artifact (NumSemSets, EigValLaplacian, DegMat, Eccentricity) reads every
        # pair of the answers: it finds Semantic Entropy's in the call cache and scores the rest
        artifact = _build(cache, pair_matrix_build.build, PAIR_MATRIX.inputs.param_keys(), "extract_nli_pair_matrix")
        every = {(a, b) for p in records for a in p.samples for b in p.samples}
        answers_only = {pair for pair in scored_by_se if pair in every}
        assert 0 < len(answers_only) < len(every)
        assert sorted(_StandInScorer.computed) == sorted(scored_by_se + sorted(every - answers_only))
        assert artifact["diagnostics"]["pairs"] == len(records) * N_MAX * N_MAX
        # and Semantic Entropy run again, after the artifact, finds every pair it reads
        before = len(_StandInScorer.computed)
        again = _build(cache, score_step.score, SPEC.score.param_keys(), "score_semantic_entropy")
        assert len(_StandInScorer.computed) == before and again.records == raw.records


def test_a_random_choice_of_samples_needs_every_pair() -> None:
    """``samples.selection=random`` on lazily scored pairs is a one-line error naming the
    setting that scores every pair; with every pair it runs."""
    records = _passages()
    overrides = ["samples.selection=random", "samples.used=4"]
    with pytest.raises(ConfigError, match=r"samples\.selection=random.*semantic_entropy\.score\.pairs=all") as caught:
        _scores(records, _raw(records, LAZY), overrides)
    assert "\n" not in str(caught.value)
    assert len(_scores(records, _raw(records, ALL_PAIRS), overrides)) == 4 * len(
        records
    )  # se_sum, se_frequency, se_farquhar, se_farquhar_nocontra
    # a file whose classes miss a pair the classes read names the record and the field
    raw = _raw(records, ALL_PAIRS)
    raw.records["born"]["classes"][0][1] = UNSCORED
    with pytest.raises(RecordError, match=r"record 'born', field 'classes'.*\(0, 1\)"):
        _scores(records, raw, [])


def test_the_stand_in_scorer_keys_its_pairs_as_the_nli_scorer_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stand-in changes only where the probabilities come from: its cache keys are the NLI
    scorer's (kind, model identity, premise, hypothesis), one per pair."""
    monkeypatch.setattr(_StandInScorer, "computed", [])
    with CallCache(tmp_path / "calls.sqlite") as cache:
        scorer = _StandInScorer(NLIKnobs(), cache=cache)
        first = scorer.class_probs(["a", "b"], ["b", "a"])
        assert cache.stats.misses == 2
        again = scorer.class_probs(["b"], ["a"])
        assert cache.stats.hits == 1 and np.array_equal(again[0], first[1])


def test_a_waves_pairs_go_to_the_nli_in_groups_of_similar_length() -> None:
    """A model batch is padded to its longest pair: a wave's pairs are sorted by length and
    cut where a pair is longer than 5/4 of its group's first."""
    pairs = [("a" * n, "b") for n in (40, 3, 4, 100, 5, 41, 120)]
    groups = length_groups(pairs)
    assert [[len(p) + len(h) for p, h in group] for group in groups] == [[4, 5], [6], [41, 42], [101, 121]]
    assert sorted(p for group in groups for p in group) == sorted(pairs)
