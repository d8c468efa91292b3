"""Our SelfCheck-NLI equals selfcheckgpt 0.1.7's SelfCheckNLI on the same model and passages.

The reference hard-codes DeBERTa-v2 classes and takes ``softmax(logits)[1]`` of a 2-label
model (potsawee's); we load our MiniLM cross-encoder through the Auto classes and give it
the 2-label export of that model (neutral row of the head removed). Our scorer, which
reads the label order from the config and keeps only the entailment and contradiction
logits, must give the same sentence scores on the 2-label export *and* on the 3-label
original (Eq. 9 is the same number).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hallulab.methods.sample_matrix import selected_columns, sentence_scores
from hallulab.methods.sample_selection import SampleKnobs
from hallulab.methods.selfcheck_nli.score import record_matrices
from hallulab.nli.scorer import NLIKnobs, NLIScorer
from hallulab.nli.train import NLITrainKnobs, export_two_label, train_cross_encoder
from hallulab.tooling.reference import reference_nli
from tests.conftest import requires_wikibio
from tests.test_nli_train import PAIRS

pytestmark = [pytest.mark.reference, pytest.mark.model]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("nli-parity")
    three = train_cross_encoder(PAIRS, NLITrainKnobs(batch_size=8, num_threads=1, learning_rate=1e-4), root / "three")
    assert three["pairs"] == len(PAIRS)
    return root / "three", export_two_label(root / "three", root / "two")


def _compare(records, models: tuple[Path, Path]) -> None:
    three, two = models
    reference = reference_nli(str(two))
    ours_two = record_matrices(records, NLIScorer(NLIKnobs(model=str(two), batch_size=16)))
    ours_three = record_matrices(records, NLIScorer(NLIKnobs(model=str(three), batch_size=16)))
    everything = SampleKnobs()
    for record in records:
        theirs = reference.predict(list(record.sentences), list(record.samples))
        for matrix in (ours_two[record.id], ours_three[record.id]):
            ours = sentence_scores(matrix, selected_columns(record.id, matrix.shape[1], everything))
            np.testing.assert_allclose(ours, theirs, atol=1e-4)


def test_nli_parity_on_the_toy_set(toy_passages, models) -> None:
    _compare(toy_passages, models)


@requires_wikibio
def test_nli_parity_on_wikibio_passages(wikibio_passages, models) -> None:
    trimmed = [replace(p, samples=p.samples[:8]) for p in wikibio_passages[:3]]
    _compare(trimmed, models)
