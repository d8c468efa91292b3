from __future__ import annotations

import math
import random

import numpy as np
import pytest

from hallulab.core.units import variants
from hallulab.methods.sample_matrix import selected_columns
from hallulab.methods.sample_selection import SampleKnobs
from hallulab.methods.selfcheck_ngram.aggregate import headline_variants
from hallulab.methods.selfcheck_ngram.corpus import NgramCorpus
from hallulab.methods.selfcheck_ngram.knobs import NgramKnobs
from hallulab.methods.selfcheck_ngram.ngram import score_corpora, selfcheck_ngram, selfcheck_ngram_orders


def _naive(corpus: NgramCorpus, n: int, k: float = 0.0) -> tuple[list[float], list[float], float, float]:
    """Dictionary counting exactly as selfcheckgpt 0.1.7's NgramModel/UnigramModel do."""
    counts: dict[object, int] = {"<unk>": 0}
    total = 0
    for text in (corpus.response, *corpus.samples):
        for sentence in text:
            tokens = [t.lower() for t in sentence]
            grams = [tuple((["<s>"] * (n - 1) + tokens)[i : i + n]) for i in range(len(tokens))]
            for gram in grams:
                counts[gram] = counts.get(gram, 0) + 1
            total += len(grams)
    avg, mx, doc = [], [], []
    for sentence in corpus.sentences:
        tokens = [t.lower() for t in sentence]
        grams = [tuple((["<s>"] * (n - 1) + tokens)[i : i + n]) for i in range(len(tokens))]
        logs = []
        for gram in grams:
            count = counts.get(gram, counts["<unk>"])
            p = (count + k) / (total + k * len(counts))
            logs.append(math.log(p) if p > 0 else -math.inf)
        avg.append(-float(np.mean(logs)))
        mx.append(-min(logs))
        doc.extend(logs)
    return avg, mx, -float(np.mean(doc)), float(np.mean(mx))


def _random_corpus(rng: random.Random) -> NgramCorpus:
    words = ["The", "the", "cat", "sat", "on", "mat", ".", "a", "dog", "<s>"]

    def sentence() -> list[str]:
        return [rng.choice(words) for _ in range(rng.randint(1, 7))]

    response = [sentence() for _ in range(rng.randint(1, 4))]
    samples = [[sentence() for _ in range(rng.randint(1, 4))] for _ in range(rng.randint(0, 5))]
    return NgramCorpus(sentences=response, response=response, samples=samples)


def test_unigram_hand_computed_example() -> None:
    corpus = NgramCorpus(sentences=[["A", "b"]], response=[["A", "b"]], samples=[[["a", "c"]]])
    scores = selfcheck_ngram(corpus, 1)
    # counts a:2 b:1 c:1 of 4 tokens -> -log p = log 2, log 4
    assert scores.sentence_avg[0] == pytest.approx((math.log(2) + math.log(4)) / 2)
    assert scores.sentence_max[0] == pytest.approx(math.log(4))
    assert scores.passage_max == pytest.approx(math.log(4))


def test_bigrams_are_left_padded_within_each_sentence() -> None:
    corpus = NgramCorpus(sentences=[["b", "a"]], response=[["a", "b"], ["b", "a"]], samples=[])
    scores = selfcheck_ngram(corpus, 2)
    # training bigrams: (<s>,a) (a,b) (<s>,b) (b,a); each 1/4
    assert scores.sentence_avg[0] == pytest.approx(math.log(4))


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_vectorised_counts_equal_dictionary_counting(seed: int, n: int) -> None:
    corpus = _random_corpus(random.Random(seed))
    avg, mx, doc_avg, doc_max = _naive(corpus, n)
    scores = selfcheck_ngram(corpus, n)
    np.testing.assert_allclose(scores.sentence_avg, avg, rtol=1e-12)
    np.testing.assert_allclose(scores.sentence_max, mx, rtol=1e-12)
    assert scores.passage_avg == pytest.approx(doc_avg, rel=1e-12)
    assert scores.passage_max == pytest.approx(doc_max, rel=1e-12)


def test_smoothing_k_follows_the_reference_formula() -> None:
    corpus = _random_corpus(random.Random(3))
    corpus = NgramCorpus(sentences=[*corpus.sentences, ["unseen"]], response=corpus.response, samples=corpus.samples)
    avg, mx, *_ = _naive(corpus, 2, k=1.0)
    scores = selfcheck_ngram(corpus, 2, smoothing_k=1.0)
    np.testing.assert_allclose(scores.sentence_avg, avg, rtol=1e-12)
    np.testing.assert_allclose(scores.sentence_max, mx, rtol=1e-12)


def test_unseen_ngram_scores_infinity_and_is_counted() -> None:
    corpus = NgramCorpus(sentences=[["x", "y"]], response=[["x"]], samples=[[["x"]]])
    scores = selfcheck_ngram(corpus, 1)
    assert scores.unseen_tokens == 1
    assert math.isinf(scores.sentence_max[0])


def test_num_samples_uses_the_first_n_samples() -> None:
    corpus = _random_corpus(random.Random(11))
    first_two = NgramCorpus(corpus.sentences, corpus.response, corpus.samples[:2])
    a = selfcheck_ngram(corpus, 2, num_samples=2)
    b = selfcheck_ngram(first_two, 2)
    np.testing.assert_array_equal(a.sentence_avg, b.sentence_avg)


def test_one_encoding_serves_every_order() -> None:
    corpus = _random_corpus(random.Random(5))
    together = selfcheck_ngram_orders(corpus, [1, 2, 3])
    for n in (1, 2, 3):
        np.testing.assert_array_equal(together[n].sentence_max, selfcheck_ngram(corpus, n).sentence_max)


def test_large_vocabulary_high_order_falls_back_to_exact_row_keys() -> None:
    tokens = [f"w{i}" for i in range(20000)]
    corpus = NgramCorpus(sentences=[tokens[:50]], response=[tokens], samples=[[tokens[:100]]])
    avg, *_ = _naive(corpus, 5)
    np.testing.assert_allclose(selfcheck_ngram(corpus, 5).sentence_avg, avg, rtol=1e-12)


def test_invalid_inputs_raise() -> None:
    corpus = NgramCorpus(sentences=[[]], response=[["a"]], samples=[])
    with pytest.raises(ValueError, match="no tokens"):
        selfcheck_ngram(corpus, 1)
    with pytest.raises(ValueError, match=">= 1"):
        selfcheck_ngram(NgramCorpus([["a"]], [["a"]], []), 0)


def test_score_corpora_names_variants_by_hyperparameters() -> None:
    corpora = {"p": _random_corpus(random.Random(1))}
    frame, unseen = score_corpora(corpora, [1, 3], ["max"])
    assert variants(frame) == ["ngram_n1_max", "ngram_n3_max"]
    assert set(frame["level"]) == {"sentence", "response"}
    assert unseen == {"ngram_n1_max": 0, "ngram_n3_max": 0}
    with pytest.raises(ValueError, match=r"samples\.used: N=99 asked for, record 'p' stores"):
        score_corpora(corpora, [1], selection=SampleKnobs(used=99))


def test_the_sample_choice_is_the_one_every_sample_method_reads() -> None:
    corpus = _random_corpus(random.Random(3))
    while len(corpus.samples) < 4:
        corpus = NgramCorpus(corpus.sentences, corpus.response, [*corpus.samples, *corpus.samples])
    corpora = {"p": corpus}
    pick = SampleKnobs(used=2, selection="random", seed=7)
    columns = selected_columns("p", len(corpus.samples), pick)
    chosen = NgramCorpus(corpus.sentences, corpus.response, [corpus.samples[i] for i in columns])
    frame, _ = score_corpora(corpora, [2], ["avg"], selection=pick)
    expected = selfcheck_ngram(chosen, 2).sentence_avg
    got = frame[frame["level"] == "sentence"]["score"].to_numpy()
    np.testing.assert_allclose(got, expected)
    first, _ = score_corpora(corpora, [2], ["avg"], selection=SampleKnobs(used=2))
    np.testing.assert_allclose(
        first[first["level"] == "sentence"]["score"].to_numpy(), selfcheck_ngram(corpus, 2, num_samples=2).sentence_avg
    )


def test_the_headline_is_the_unigram_rows_or_the_lowest_order_asked_for() -> None:
    assert headline_variants(NgramKnobs()) == ("ngram_n1_avg", "ngram_n1_max")
    assert headline_variants(NgramKnobs(n=(3, 2), aggregations=("max",))) == ("ngram_n2_max",)
