"""Constrained beam search (Self-Familiarity §3.2.2) against brute-force enumeration."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pytest

from hallulab.llm.constrained_beam import constrained_beam_search

EOS = 3


class BigramModel:
    """A tiny model: the next-token distribution depends on the previous token only."""

    def __init__(self, table: np.ndarray, first: np.ndarray) -> None:
        self.table, self.first = table, first
        self.rows: list[tuple[int, ...]] = []
        self.calls = 0

    def logprobs(self, tokens: tuple[int, ...]) -> np.ndarray:
        return self.first if not tokens else self.table[tokens[-1]]

    def start(self) -> np.ndarray:
        self.rows = [()]
        return self.first[None, :]

    def advance(self, parents: Sequence[int], tokens: Sequence[int]) -> np.ndarray:
        self.calls += 1
        self.rows = [(*self.rows[p], t) for p, t in zip(parents, tokens, strict=True)]
        return np.stack([self.logprobs(r) for r in self.rows])


def _model(seed: int, vocab: int = 4) -> BigramModel:
    rng = np.random.default_rng(seed)

    def dist(n: int) -> np.ndarray:
        p = rng.dirichlet(np.full(vocab, 0.5), size=n)
        return np.log(p)

    return BigramModel(dist(vocab), dist(1)[0])


def _contains(tokens: tuple[int, ...], sequences: list[tuple[int, ...]]) -> bool:
    return any(tokens[i : i + len(s)] == s for s in sequences for i in range(len(tokens) - len(s) + 1))


def _brute_force(
    model: BigramModel, sequences: list[tuple[int, ...]], max_new: int, vocab: int = 4, prompt_length: int = 0
) -> float:
    words = [t for t in range(vocab) if t != EOS]
    # a sequence ends with EOS before the limit (its log-probability counted, the token not in
    # the length), or by length with exactly max_new tokens; scores sum / (prompt_length + length)
    best = -np.inf
    for length in range(1, max_new + 1):
        for body in itertools.product(words, repeat=length):
            if not _contains(body, sequences):
                continue
            total = sum(model.logprobs(body[:i])[t] for i, t in enumerate(body))
            if length == max_new:
                best = max(best, total / (prompt_length + length))
            else:
                best = max(best, (total + model.logprobs(body)[EOS]) / (prompt_length + length))
    return float(best)


@pytest.mark.parametrize("prompt_length", [0, 30])
@pytest.mark.parametrize("seed", range(8))
def test_a_wide_beam_finds_the_best_constrained_sequence(seed: int, prompt_length: int) -> None:
    model = _model(seed)
    sequences = [(2, 1), (0, 0, 2)]  # a disjunctive constraint: either sequence
    found = constrained_beam_search(
        model, sequences, beam_size=200, max_new_tokens=5, eos_ids=[EOS], prompt_length=prompt_length
    )
    assert found, "a wide beam always finds a constrained sequence"
    best = _brute_force(model, sequences, 5, prompt_length=prompt_length)
    assert found[0].score(prompt_length) == pytest.approx(best, abs=1e-12)
    assert all(_contains(h.tokens, sequences) for h in found)
    scores = [h.score(prompt_length) for h in found]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("seed", range(8))
def test_a_narrow_beam_still_meets_an_unlikely_constraint(seed: int) -> None:
    model = _model(seed)
    # make token 1 very unlikely everywhere: unconstrained beams would never write it
    model.table[:, 1] -= 20.0
    model.first[1] -= 20.0
    sequences = [(1, 1)]
    found = constrained_beam_search(model, sequences, beam_size=2, max_new_tokens=4, eos_ids=[EOS])
    assert found and all(_contains(h.tokens, sequences) for h in found)
    assert found[0].normalised <= _brute_force(model, sequences, 4) + 1e-12


def test_scores_are_sums_of_the_model_log_probabilities() -> None:
    model = _model(3)
    found = constrained_beam_search(model, [(0,)], beam_size=4, max_new_tokens=3, eos_ids=[EOS])
    for hyp in found:
        expected = sum(model.logprobs(hyp.tokens[:i])[t] for i, t in enumerate(hyp.tokens))
        if hyp.ended == "eos":
            expected += model.logprobs(hyp.tokens)[EOS]
        assert hyp.logprob == pytest.approx(expected)
        assert hyp.length == len(hyp.tokens)  # an EOS token counts in the sum, not the length


def test_a_constraint_longer_than_the_budget_finds_nothing() -> None:
    model = _model(0)
    assert constrained_beam_search(model, [(0, 1, 2)], beam_size=8, max_new_tokens=2, eos_ids=[EOS]) == []


def test_empty_constraints_are_refused() -> None:
    with pytest.raises(ValueError, match="non-empty constraint"):
        constrained_beam_search(_model(0), [()], beam_size=2, max_new_tokens=2, eos_ids=[EOS])
