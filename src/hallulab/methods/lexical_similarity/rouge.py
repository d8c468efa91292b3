"""ROUGE-N and ROUGE-L F-measure between two texts, computed as Google's ``rouge-score``
package computes them (Lin, 2004): lower-case, every run of characters outside [a-z0-9]
a separator, Porter stemming of tokens longer than three characters when ``stem`` is set;
ROUGE-N from clipped n-gram overlap counts, ROUGE-L from the longest common subsequence;
F = 2 P R / (P + R), 0 when either side has no n-gram / token."""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence

from hallulab.methods.lexical_similarity.knobs import METRICS

_SEPARATORS = re.compile(r"[^a-z0-9]+")


@functools.lru_cache(maxsize=1)
def _stemmer() -> object:
    from nltk.stem import porter

    return porter.PorterStemmer()  # NLTK's default mode, as rouge-score builds it


@functools.lru_cache(maxsize=65536)
def _stem(token: str) -> str:
    return str(_stemmer().stem(token))  # type: ignore[attr-defined]


def tokens(text: str, stem: bool = True) -> tuple[str, ...]:
    words = [w for w in _SEPARATORS.sub(" ", text.lower()).split() if w]
    return tuple(_stem(w) if stem and len(w) > 3 else w for w in words)


def _f_measure(overlap: float, predicted: int, reference: int) -> float:
    if predicted == 0 or reference == 0 or overlap == 0:
        return 0.0
    precision, recall = overlap / predicted, overlap / reference
    return 2 * precision * recall / (precision + recall)


def _ngrams(words: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def rouge_f(reference: Sequence[str], prediction: Sequence[str], metric: str) -> float:
    """F-measure of ``metric`` between two token sequences (symmetric in its arguments)."""
    if metric == "rougeL":
        return _f_measure(_lcs(reference, prediction), len(prediction), len(reference))
    if metric in ("rouge1", "rouge2"):
        n = int(metric[-1])
        ref, pred = _ngrams(reference, n), _ngrams(prediction, n)
        overlap = sum((ref & pred).values())
        return _f_measure(overlap, sum(pred.values()), sum(ref.values()))
    raise ValueError(f"unknown ROUGE metric {metric!r}; expected one of {list(METRICS)}")
