"""Semantic Entropy's semantic classes, and the NLI pairs they read, scored only as they are read.

Kuhn et al. (2023, §3.2, Algorithm 1), as lm-polygraph 0.7.0's ``SemanticClassesCalculator``
runs it, and Farquhar et al. (2024), as their released ``get_semantic_ids`` runs it, cluster the
samples s_1..s_N greedily, in order: s_i is compared with the first member (the *leader*) of each
class opened so far, and opens a class of its own when no leader is equivalent to it. Each
comparison reads the NLI class of the pair (leader, s_i), the *forward* class (premise the
leader), and of (s_i, leader), the *backward* class:

- lm-polygraph's rule (:data:`LM_POLYGRAPH`): the classes in order, s_i joins the first whose
  forward and backward classes are both entailment, read as lm-polygraph's
  ``forward_entailment and backward_entailment`` reads them (the backward class only when the
  forward one is entailment);
- Farquhar et al.'s (:func:`farquhar`): s_i is compared with every leader and joins the last
  equivalent one (their loop hands each new leader every later answer equivalent to it);
  ``bidirectional``: entailment both ways (their ``strict_entailment=True``);
  ``no_contradiction``: neither class is contradiction and not both are neutral. The backward
  class is read unless the forward one already settles the rule.

A clustering therefore reads far fewer pairs than the N (N - 1) ordered pairs an all-pairs
matrix holds (lm-polygraph's ``SemanticMatrixCalculator`` scores them all first). The clustering
is written once, as a generator that yields the pairs it needs before it can go on
(:func:`greedy_classes`, all samples of a record at once, each going through the leaders known so
far): the score step drives every record's clusterings together, in waves, each wave batched
NLI requests, in groups of similar length, for the pairs all of them need next
(:func:`lazy_class_matrices`); the aggregate step drives them over the stored classes
(:func:`stored_classes`).

The pairs of a prefix are among the stored ones: s_i's comparisons depend only on s_1..s_i, so
the clustering of the first N samples makes exactly the comparisons the clustering of all N_max
makes up to s_N. The aggregate step's classes at any ``samples.used`` with
``samples.selection: first`` thus read only stored classes, and a sweep over N calls no model.
A seeded random subset is not a prefix: its pairs are stored by ``semantic_entropy.score.pairs:
all`` (every ordered pair, :data:`ALL_PAIRS`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass

import numpy as np

#: the NLI classes the score step stores, as ``NLIScorer.class_probs`` orders its columns;
#: UNSCORED: a pair that no clustering of any prefix reads, left out of a lazy score step
ENTAILMENT, NEUTRAL, CONTRADICTION, UNSCORED = 0, 1, 2, -1
#: when two answers are one meaning in Farquhar et al.'s reading: neither direction a
#: contradiction and not both neutral (their released ``get_semantic_ids`` with
#: ``strict_entailment=False``), or entailment both ways (``strict_entailment=True``, Kuhn et al.'s)
FARQUHAR_EQUIVALENCES = ("no_contradiction", "bidirectional")
#: which class a sample equivalent to several leaders joins
JOINS = ("first", "last")

Pair = tuple[int, int]
#: a clustering run: yields the (premise, hypothesis) index pairs it needs next, whose classes
#: the driver writes into the matrix the clustering reads before resuming it; returns each
#: sample's class index
Reads = Generator[list[Pair], None, list[int]]
#: premises, hypotheses -> (n, 3) probabilities over (entailment, neutral, contradiction)
ClassProbs = Callable[[list[str], list[str]], np.ndarray]


@dataclass(frozen=True)
class Clustering:
    """A greedy clustering: its equivalence rule (:data:`FARQUHAR_EQUIVALENCES`) and which of
    several equivalent leaders' classes a sample joins (:data:`JOINS`)."""

    rule: str
    join: str

    def __post_init__(self) -> None:
        if self.rule not in FARQUHAR_EQUIVALENCES:
            raise ValueError(f"rule: {self.rule!r} is not one of {list(FARQUHAR_EQUIVALENCES)}")
        if self.join not in JOINS:
            raise ValueError(f"join: {self.join!r} is not one of {list(JOINS)}")


#: Kuhn et al.'s Algorithm 1 as lm-polygraph's ``SemanticClassesCalculator`` runs it
LM_POLYGRAPH = Clustering("bidirectional", "first")


def farquhar(rule: str) -> Clustering:
    """Farquhar et al.'s released ``get_semantic_ids`` with the equivalence ``rule``."""
    return Clustering(rule, "last")


#: every clustering Farquhar et al.'s readings ask for (se_farquhar and se_farquhar_nocontra)
FARQUHAR_CLUSTERINGS = tuple(farquhar(rule) for rule in FARQUHAR_EQUIVALENCES)


def settled_by_forward(forward: int, rule: str) -> bool | None:
    """The equivalence when the forward class alone settles it (never equivalent), None when
    the backward class is needed too."""
    if rule == "bidirectional":
        return None if forward == ENTAILMENT else False
    return False if forward == CONTRADICTION else None


def equivalent(forward: int, backward: int, rule: str) -> bool:
    """Whether two answers are one meaning, from the NLI classes of both directions
    (:data:`FARQUHAR_EQUIVALENCES`)."""
    if rule == "bidirectional":
        return forward == ENTAILMENT and backward == ENTAILMENT
    return CONTRADICTION not in (forward, backward) and (forward, backward) != (NEUTRAL, NEUTRAL)


def _verdict(classes: np.ndarray, leader: int, i: int, rule: str) -> bool | None:
    """Whether s_i is equivalent to ``leader``, from the classes read so far; None while a
    pair the comparison reads is unscored."""
    forward = int(classes[leader, i])
    if forward == UNSCORED:
        return None
    settled = settled_by_forward(forward, rule)
    if settled is not None:
        return settled
    backward = int(classes[i, leader])
    return None if backward == UNSCORED else equivalent(forward, backward, rule)


def _next_pair(classes: np.ndarray, leader: int, i: int) -> Pair:
    """The pair an undecided comparison reads next: the forward one, then the backward one."""
    return (leader, i) if classes[leader, i] == UNSCORED else (i, leader)


def greedy_classes(classes: np.ndarray, clustering: Clustering) -> Reads:
    """The greedy classes of the samples of the N x N ``classes`` (``classes[a, b]``: premise a,
    hypothesis b; :data:`UNSCORED` where not known yet), asking for each pair it reads before
    reading it (the module docstring).

    The samples are compared in parallel, each with the leaders in order: the leaders opened so
    far are final (a later leader is appended after them), so s_i can go through them while
    earlier samples are still undecided, and it reads the same pairs as the one-sample-at-a-time
    loop. With ``join="first"`` s_i has its class at its first equivalent leader and one
    comparison at a time is asked for (forward class first); with ``join="last"`` every leader
    is compared, so all its undecided comparisons are asked for at once. A sample equivalent to
    no leader it has seen waits until every earlier sample has its class (one of them may still
    open a class before it), then joins the last equivalent leader (``last``) or opens a class.
    Each yield holds the pairs all samples need next; so a record needs about as many rounds
    as it has classes, not as many as it has comparisons."""
    rule, last = clustering.rule, clustering.join == "last"
    count = classes.shape[0]
    leaders: list[int] = []
    labels = [-1] * count
    matched: list[list[int]] = [[] for _ in range(count)]
    compared = [0] * count  # how many leaders, in order, sample i has been compared with
    settled = 0  # every sample before it has its class
    while True:
        needed: list[Pair] = []
        every_earlier = True
        for i in range(settled, count):
            if labels[i] < 0:
                while compared[i] < len(leaders) and not (matched[i] and not last):
                    verdict = _verdict(classes, leaders[compared[i]], i, rule)
                    if verdict is None:
                        break
                    if verdict:
                        matched[i].append(compared[i])
                    compared[i] += 1
                if matched[i] and not last:
                    labels[i] = matched[i][0]
                elif compared[i] == len(leaders):
                    if every_earlier:
                        labels[i] = matched[i][-1] if matched[i] else len(leaders)
                        if not matched[i]:
                            leaders.append(i)
                elif last:
                    needed += [
                        _next_pair(classes, leader, i)
                        for leader in leaders[compared[i] :]
                        if _verdict(classes, leader, i, rule) is None
                    ]
                else:
                    needed.append(_next_pair(classes, leaders[compared[i]], i))
            every_earlier = every_earlier and labels[i] >= 0
        while settled < count and labels[settled] >= 0:
            settled += 1
        if settled == count:
            return labels
        if not needed:  # pragma: no cover - the first undecided sample always asks or decides
            raise AssertionError("greedy_classes: undecided samples that ask for no pair")
        yield needed


def _advance(reads: Reads) -> list[Pair] | None:
    """Start or resume a clustering: the pairs it needs next, or None when it has finished."""
    try:
        return next(reads)
    except StopIteration:
        return None


class UnscoredPairError(LookupError):
    """A clustering read a pair the stored classes do not hold (the caller names the record)."""

    def __init__(self, pairs: list[Pair]) -> None:
        self.pairs = pairs
        super().__init__(f"the NLI classes of the sample pairs {pairs} were not scored")


def stored_classes(classes: np.ndarray, columns: Sequence[int] | np.ndarray, clustering: Clustering) -> list[int]:
    """The classes of the samples at ``columns`` (in that order) from a record's stored
    N_max x N_max classes; :class:`UnscoredPairError` when a pair it reads was not scored."""
    chosen = np.asarray(columns, dtype=np.intp)
    reads = greedy_classes(np.asarray(classes, dtype=np.int64)[np.ix_(chosen, chosen)], clustering)
    try:
        needed = next(reads)
    except StopIteration as done:
        return list(done.value)
    raise UnscoredPairError([(int(chosen[a]), int(chosen[b])) for a, b in needed])


def unscored(count: int) -> np.ndarray:
    """A record's class matrix before any pair is scored: every pair :data:`UNSCORED`, the
    diagonal (a sample against itself, which no clustering reads) entailment."""
    matrix = np.full((count, count), UNSCORED, dtype=np.int64)
    np.fill_diagonal(matrix, ENTAILMENT)
    return matrix


@dataclass(frozen=True)
class PairRequest:
    """One record's texts, as the NLI model reads them, and the clusterings that read their pairs."""

    texts: Sequence[str]
    clusterings: Sequence[Clustering]


@dataclass(frozen=True)
class LazyClasses:
    """What :func:`lazy_class_matrices` found: each request's class matrix (:data:`UNSCORED`
    where no clustering read the pair), the waves it took and the ``class_probs`` requests
    they made."""

    matrices: list[np.ndarray]
    waves: int
    requests: int

    @property
    def pairs(self) -> int:
        """The scored pairs of every matrix, the diagonal left out."""
        return sum(int((m != UNSCORED).sum()) - m.shape[0] for m in self.matrices)


#: a wave's pairs go to the NLI model in groups of similar length: sorted by length (in
#: characters, as the NLI scorer sorts a request), a group ends where a pair is longer than
#: this many times the group's first. A model batch is padded to its longest pair, and the few,
#: mixed-length pairs of a wave would otherwise share a batch padded to the longest answer
LENGTH_RATIO = 1.25


def length_groups(pairs: Sequence[tuple[str, str]], ratio: float = LENGTH_RATIO) -> list[list[tuple[str, str]]]:
    """``pairs`` sorted by length and cut into groups whose longest is at most ``ratio`` times
    their shortest (:data:`LENGTH_RATIO`)."""
    groups: list[list[tuple[str, str]]] = []
    for pair in sorted(pairs, key=lambda p: len(p[0]) + len(p[1])):
        first = groups[-1][0] if groups else None
        if first is None or len(pair[0]) + len(pair[1]) > ratio * (len(first[0]) + len(first[1])):
            groups.append([])
        groups[-1].append(pair)
    return groups


def lazy_class_matrices(requests: Sequence[PairRequest], class_probs: ClassProbs) -> LazyClasses:
    """Every request's class matrix, with the classes of exactly the pairs its clusterings read.

    All clusterings of all records run together: each wave gathers the pairs every unfinished
    clustering needs next, scores the distinct text pairs among them (``class_probs`` requests
    of similar-length pairs, :func:`length_groups`; the class is the argmax), writes the
    classes into the matrices and resumes the clusterings. Clusterings of one record share its
    matrix, so a pair one of them read is known to the others; a text pair scored in an earlier
    wave (the same texts in another record, or a sample repeated) is not asked for again."""
    matrices = [unscored(len(request.texts)) for request in requests]
    running: list[tuple[int, Reads, list[Pair]]] = []
    for index, request in enumerate(requests):
        for clustering in request.clusterings:
            reads = greedy_classes(matrices[index], clustering)
            needed = _advance(reads)
            if needed is not None:
                running.append((index, reads, needed))
    known: dict[tuple[str, str], int] = {}
    waves = calls = 0
    while running:
        wanted: dict[tuple[str, str], None] = {}
        for index, _, needed in running:
            texts = requests[index].texts
            for a, b in needed:
                pair = (texts[a], texts[b])
                if pair not in known:
                    wanted[pair] = None
        for group in length_groups(list(wanted)):
            probs = np.asarray(class_probs([p for p, _ in group], [h for _, h in group]))
            known.update(zip(group, (int(c) for c in probs.argmax(axis=1)), strict=True))
            calls += 1
        waves += bool(wanted)
        still: list[tuple[int, Reads, list[Pair]]] = []
        for index, reads, needed in running:
            texts = requests[index].texts
            for a, b in needed:
                matrices[index][a, b] = known[(texts[a], texts[b])]
            following = _advance(reads)
            if following is not None:
                still.append((index, reads, following))
        running = still
    return LazyClasses(matrices, waves, calls)
