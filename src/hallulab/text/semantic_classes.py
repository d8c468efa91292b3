"""Semantic equivalence classes of a set of texts, and the entropy of their sizes: what the
sampling-consistency methods share (Semantic Entropy, Kuhn et al., 2023, §3.2; the
Self-Detection baseline of Self-Familiarity, Zhao et al., 2023).

Clustering is greedy, in the texts' order: a text joins the first class whose *first member*
it is equivalent to, else it opens a new class (Kuhn et al.'s Algorithm 1, as lm-polygraph's
``SemanticClassesCalculator`` and the Self-Detection paper run it); Farquhar et al.'s released
code puts it in the last such class instead (``join="last"``). What "equivalent" means is
the caller's: bidirectional entailment by an NLI model for Semantic Entropy, a similarity
threshold for Self-Detection. Pure functions over indices; no model is called here.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

#: which class a text equivalent to several leaders joins: the first (Kuhn et al.'s Algorithm 1,
#: lm-polygraph), or the last (Farquhar et al.'s released ``get_semantic_ids``, whose loop hands
#: each new leader every later text equivalent to it, over an earlier leader's claim)
JOINS = ("first", "last")


def cluster_by_leaders(count: int, equivalent: Callable[[int, int], bool], join: str = "first") -> list[int]:
    """Class index of each of ``count`` texts: text i joins the first (``join="last"``: the
    last) class whose first member ``leader`` satisfies ``equivalent(i, leader)``, else opens a
    new class. Which texts lead does not depend on ``join``: a text leads when no earlier
    leader is equivalent to it."""
    if join not in JOINS:
        raise ValueError(f"join: {join!r} is not one of {list(JOINS)}")
    leaders: list[int] = []
    labels: list[int] = []
    for i in range(count):
        matches = [cluster for cluster, leader in enumerate(leaders) if equivalent(i, leader)]
        if matches:
            labels.append(matches[0] if join == "first" else matches[-1])
        else:
            labels.append(len(leaders))
            leaders.append(i)
    return labels


def cluster_by_similarity(similarity: np.ndarray, threshold: float) -> list[int]:
    """Classes where two texts are equivalent when ``similarity[i, leader] >= threshold``."""
    return cluster_by_leaders(similarity.shape[0], lambda i, leader: bool(similarity[i, leader] >= threshold))


def cluster_by_bidirectional_entailment(entails: np.ndarray) -> list[int]:
    """Classes where two texts are equivalent when each entails the other: ``entails[a, b]``
    says premise a entails hypothesis b (Kuhn et al., 2023, §3.2)."""
    return cluster_by_leaders(entails.shape[0], lambda i, leader: bool(entails[leader, i]) and bool(entails[i, leader]))


def cluster_entropy(labels: Sequence[int]) -> float:
    """H = -sum_c p_c log p_c over the classes, p_c = n_c / T (natural log): 0 when every text
    agrees, log T when none does (the discrete Semantic Entropy of Farquhar et al., 2024)."""
    total = len(labels)
    return float(-sum((n / total) * math.log(n / total) for n in Counter(labels).values()))


def members(labels: Sequence[int]) -> list[list[int]]:
    """The texts of each class, classes in the order they opened."""
    out: list[list[int]] = [[] for _ in range(max(labels, default=-1) + 1)]
    for index, label in enumerate(labels):
        out[label].append(index)
    return out
