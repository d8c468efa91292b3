"""SelfCheck-NLI scoring with a real (tiny, freshly trained) HF NLI model."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import transformers

from hallulab.cache import CallCache
from hallulab.methods.selfcheck_nli import (
    NLIConfig,
    NLIScorer,
    contradiction_matrix,
    label_indices,
    sentence_scores,
)
from hallulab.nli.train import TrainConfig, train_cross_encoder
from tests.test_nli_train import PAIRS

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nli") / "model"
    train_cross_encoder(PAIRS, TrainConfig(batch_size=8, num_threads=1, learning_rate=1e-4), out)
    return out


def test_label_order_is_read_from_the_config() -> None:
    assert label_indices(SimpleNamespace(label2id={"ENTAILMENT": 0, "NEUTRAL": 1, "CONTRADICTION": 2})) == (0, 2)
    assert label_indices(SimpleNamespace(label2id={}, id2label={0: "contradiction", 1: "entailment"})) == (1, 0)
    with pytest.raises(ValueError, match="contradiction"):
        label_indices(SimpleNamespace(label2id={"LABEL_0": 0, "LABEL_1": 1}))


def test_probability_uses_only_entailment_and_contradiction_logits(model_dir: Path) -> None:
    premise, hypothesis = "A man is playing a guitar.", "A man is sleeping."
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    with torch.inference_mode():
        z = model(**tokenizer(premise, hypothesis, return_tensors="pt")).logits[0]
    e, c = label_indices(model.config)
    expected = float(torch.exp(z[c]) / (torch.exp(z[e]) + torch.exp(z[c])))
    got = NLIScorer(NLIConfig(model=str(model_dir))).contradiction_probs([premise], [hypothesis])
    assert got[0] == pytest.approx(expected, abs=1e-6)


def test_batched_equals_one_pair_at_a_time_and_duplicates_are_scored_once(model_dir: Path, tmp_path: Path) -> None:
    premises = [p.premise for p in PAIRS[:6]] * 2
    hypotheses = [p.hypothesis for p in PAIRS[:6]] * 2
    batched = NLIScorer(NLIConfig(model=str(model_dir), batch_size=8)).contradiction_probs(premises, hypotheses)
    single = NLIScorer(NLIConfig(model=str(model_dir), batch_size=1)).contradiction_probs(premises, hypotheses)
    np.testing.assert_allclose(batched, single, atol=1e-5)
    with CallCache(tmp_path / "c.sqlite") as cache:
        scorer = NLIScorer(NLIConfig(model=str(model_dir)), cache=cache)
        np.testing.assert_allclose(scorer.contradiction_probs(premises, hypotheses), batched, atol=1e-6)
        assert cache.stats.misses == 6  # 12 pairs, 6 distinct
        scorer.contradiction_probs(premises, hypotheses)
        assert cache.stats.hits == 6  # the same model again: all hits


def test_sentence_score_is_the_mean_over_the_first_n_samples(model_dir: Path) -> None:
    scorer = NLIScorer(NLIConfig(model=str(model_dir)))
    matrix = contradiction_matrix(["A man is sleeping.", "A man plays."], ["A man is playing a guitar."] * 3, scorer)
    assert matrix.shape == (2, 3)
    np.testing.assert_allclose(sentence_scores(matrix), matrix.mean(axis=1))
    np.testing.assert_allclose(sentence_scores(matrix, 1), matrix[:, 0])
    assert np.all((matrix >= 0) & (matrix <= 1))
