"""SelfCheckGPT with n-gram (Manakul et al., 2023, §5.3, Eq. 7-8; Table 7).

An n-gram model is "trained" on the main response R and the samples S_1..S_N (R's own
counts act as add-one smoothing for R's tokens), then each sentence r_i of R is scored:

    S^Avg_n-gram(i) = -(1/J) * sum_j log p~_ij                  (Eq. 7)
    S^Max_n-gram(i) = max_j (-log p~_ij)                        (Eq. 8)

Passage level (§7.2): Avg is the mean of -log p~ over *all tokens* of the passage;
Max is the mean over sentences of the sentence maxima (Eq. 12).

Details fixed by the reference code (selfcheckgpt 0.1.7 ``modeling_ngram.py``), all
followed here:
  * tokens are spaCy ``token.text`` (training texts split into sentences, each stripped
    and re-tokenised; evaluated sentences tokenised as given), lowercased by default;
  * n-grams are taken within a sentence, left-padded with n-1 ``<s>`` symbols, one
    n-gram per token;
  * p~ = (count(g) + k) / (M + k * (|G| + 1)) where M is the number of training n-grams,
    |G| the number of distinct ones (+1 for ``<unk>``) and k = 0 by default: a joint
    n-gram frequency, *not* a conditional probability, with no smoothing;
  * an n-gram never seen in training has probability 0 (-log p = inf). With R in the
    training data this cannot happen unless the given sentences are not substrings of R's
    tokenisation; :attr:`NgramPassageScores.unseen_tokens` counts such cases.

Shapes: a passage with I sentences gives arrays of shape (I,). Scores are unbounded
(higher = more likely hallucinated). Implementation: tokens are mapped to integer ids
once per passage; n-grams are sliding windows over one padded id array and are counted
with ``numpy.unique`` (no per-n-gram Python loop), and one encoding serves every n.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.lib.stride_tricks import sliding_window_view

from hallulab.core.config import ConfigError
from hallulab.core.units import ScoreTable
from hallulab.methods.sample_matrix import selected_columns
from hallulab.methods.sample_selection import SampleKnobs
from hallulab.methods.selfcheck_ngram.corpus import NgramCorpus
from hallulab.methods.selfcheck_ngram.knobs import AGGREGATIONS

PAD_SYMBOL = "<s>"


@dataclass(frozen=True)
class NgramPassageScores:
    """Scores of one passage for one n (higher = more likely non-factual)."""

    sentence_avg: np.ndarray
    sentence_max: np.ndarray
    passage_avg: float
    passage_max: float
    unseen_tokens: int

    def sentence_scores(self, aggregation: str) -> np.ndarray:
        return self.sentence_avg if aggregation == "avg" else self.sentence_max

    def passage_score(self, aggregation: str) -> float:
        return self.passage_avg if aggregation == "avg" else self.passage_max


def variant_name(n: int, aggregation: str) -> str:
    """Result key encoding the hyperparameters, e.g. ``ngram_n1_max``."""
    return f"ngram_n{n}_{aggregation}"


class _Vocabulary:
    """String -> dense id, with the pad symbol fixed at id 0 (as in NLTK, a literal
    ``<s>`` token and the pad symbol are the same string)."""

    def __init__(self, lowercase: bool) -> None:
        self.lowercase = lowercase
        self.ids: dict[str, int] = {PAD_SYMBOL: 0}

    def encode(self, tokens: Iterable[str]) -> np.ndarray:
        ids = self.ids
        out = []
        for token in tokens:
            key = token.lower() if self.lowercase else token
            index = ids.get(key)
            if index is None:
                index = ids[key] = len(ids)
            out.append(index)
        return np.asarray(out, dtype=np.int64)


def _ngram_rows(sentences: Sequence[np.ndarray], n: int) -> np.ndarray:
    """All n-grams of the sentences, left-padded with id 0, one row per token: (T, n)."""
    if not sentences:
        return np.empty((0, n), dtype=np.int64)
    pad = np.zeros(n - 1, dtype=np.int64)
    sequence = np.concatenate([part for s in sentences for part in (pad, s)])
    is_token = np.concatenate([part for s in sentences for part in (np.zeros(n - 1, bool), np.ones(len(s), bool))])
    windows = sliding_window_view(sequence, n)
    return windows[is_token[n - 1 :]]


def _row_keys(rows: np.ndarray, base: int) -> np.ndarray:
    """One integer per n-gram row (exact: mixed radix when it fits in int64)."""
    n = rows.shape[1]
    if n == 1:
        return rows[:, 0]
    if base**n < 2**62:
        weights = base ** np.arange(n - 1, -1, -1, dtype=np.int64)
        return rows @ weights
    contiguous = np.ascontiguousarray(rows)
    return contiguous.view(np.dtype((np.void, contiguous.dtype.itemsize * n))).ravel()


def _score_order(
    train: Sequence[np.ndarray], evaluated: Sequence[np.ndarray], n: int, base: int, k: float
) -> NgramPassageScores:
    train_keys = _row_keys(_ngram_rows(train, n), base)
    eval_keys = _row_keys(_ngram_rows(evaluated, n), base)
    distinct, counts = np.unique(train_keys, return_counts=True)
    if len(distinct):
        position = np.searchsorted(distinct, eval_keys)
        clipped = np.minimum(position, len(distinct) - 1)
        seen = (position < len(distinct)) & (distinct[clipped] == eval_keys)
        eval_counts = np.where(seen, counts[clipped], 0).astype(np.float64)
    else:  # nothing to train on: every n-gram is unseen
        seen = np.zeros(len(eval_keys), dtype=bool)
        eval_counts = np.zeros(len(eval_keys), dtype=np.float64)
    total = float(len(train_keys))
    denominator = total + k * (len(distinct) + 1)  # +1: the reference's '<unk>' entry
    with np.errstate(divide="ignore"):
        neg_logprob = -np.log((eval_counts + k) / denominator)

    lengths = np.fromiter((len(s) for s in evaluated), dtype=np.int64, count=len(evaluated))
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    sentence_avg = np.add.reduceat(neg_logprob, starts) / lengths
    sentence_max = np.maximum.reduceat(neg_logprob, starts)
    return NgramPassageScores(
        sentence_avg=sentence_avg,
        sentence_max=sentence_max,
        passage_avg=float(neg_logprob.mean()),
        passage_max=float(sentence_max.mean()),
        unseen_tokens=int((~seen).sum()),
    )


def selfcheck_ngram_orders(
    corpus: NgramCorpus,
    orders: Sequence[int],
    *,
    num_samples: int | None = None,
    lowercase: bool = True,
    smoothing_k: float = 0.0,
) -> dict[int, NgramPassageScores]:
    """Score one passage for every n in ``orders`` from one shared encoding.

    ``num_samples`` uses the first N samples (None: all). Raises ``ValueError`` on an
    evaluated sentence without tokens or an order below 1.
    """
    if any(n < 1 for n in orders):
        raise ConfigError(f"selfcheck_ngram.n: n-gram orders must be >= 1, got {list(orders)}")
    vocabulary = _Vocabulary(lowercase)
    samples = corpus.samples if num_samples is None else corpus.samples[:num_samples]
    train = [vocabulary.encode(s) for text in (corpus.response, *samples) for s in text]
    evaluated = [vocabulary.encode(s) for s in corpus.sentences]
    empty = [i for i, s in enumerate(evaluated) if len(s) == 0]
    if empty:
        raise ValueError(f"sentence(s) {empty} have no tokens")
    base = len(vocabulary.ids)
    return {n: _score_order(train, evaluated, n, base, smoothing_k) for n in orders}


def selfcheck_ngram(
    corpus: NgramCorpus,
    n: int,
    *,
    num_samples: int | None = None,
    lowercase: bool = True,
    smoothing_k: float = 0.0,
) -> NgramPassageScores:
    """Score one passage with one n-gram order (see the module docstring)."""
    return selfcheck_ngram_orders(corpus, [n], num_samples=num_samples, lowercase=lowercase, smoothing_k=smoothing_k)[n]


def score_corpora(
    corpora: dict[str, NgramCorpus],
    orders: Sequence[int],
    aggregations: Sequence[str] = AGGREGATIONS,
    *,
    selection: SampleKnobs | None = None,
    lowercase: bool = True,
    smoothing_k: float = 0.0,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Every (n, aggregation) variant over a data set: sentence and response (passage) rows
    of the unit-score table, and per variant the number of tokens whose n-gram was never
    seen in training (scored +inf). ``selection`` chooses each passage's samples (N, first
    or a seeded random N: :func:`hallulab.methods.sample_matrix.selected_columns`); None
    uses every stored sample."""
    unknown = [a for a in aggregations if a not in AGGREGATIONS]
    if unknown:
        raise ConfigError(f"selfcheck_ngram.aggregations: unknown {unknown}; expected {AGGREGATIONS}")
    per_passage = {}
    for pid, corpus in corpora.items():
        if selection is not None:
            columns = selected_columns(pid, len(corpus.samples), selection)
            corpus = NgramCorpus(corpus.sentences, corpus.response, [corpus.samples[i] for i in columns])
        per_passage[pid] = selfcheck_ngram_orders(corpus, orders, lowercase=lowercase, smoothing_k=smoothing_k)
    table = ScoreTable()
    unseen = {}
    for n in orders:
        for aggregation in aggregations:
            name = variant_name(n, aggregation)
            for pid, scores in per_passage.items():
                table.add_sentences(name, pid, scores[n].sentence_scores(aggregation).tolist())
                table.add_response(name, pid, scores[n].passage_score(aggregation))
            unseen[name] = sum(s[n].unseen_tokens for s in per_passage.values())
    return table.frame(), unseen
