"""Grey-box baselines (SelfCheckGPT §4): the formulas on hand-built tokens, token-to-sentence
mapping through the shared sentence spans."""

from __future__ import annotations

import math

import pytest

from hallulab.artifacts.sentences import locate
from hallulab.core.errors import RecordError
from hallulab.core.token_stats import TokenStats
from hallulab.core.units import record_scores, sentence_scores, variants
from hallulab.data.schema import Record
from hallulab.methods.greybox.baselines import SentenceSpans, assign_tokens, passage_scores, score_records

RESPONSE = "Ada wrote notes.  She died young."
PASSAGE = Record(id="p", response=RESPONSE, sentences=("Ada wrote notes.", "She died young."), labels=(0.0, 1.0))
SPANS = locate(RESPONSE, PASSAGE.sentences)


def _tokens() -> list[TokenStats]:
    pieces = ["Ada", " wrote", " notes", ".", " ", " She", " died", " young", "."]
    logprobs = [-1.0, -2.0, -3.0, -0.5, -9.0, -0.1, -4.0, -1.0, -0.2]
    entropies = [2.0, 1.0, 3.0, 0.5, 9.0, 1.5, 2.5, 0.5, 0.1]
    out, offset = [], 0
    for piece, logprob, entropy in zip(pieces, logprobs, entropies, strict=True):
        out.append(TokenStats(token=piece, logprob=logprob, entropy=entropy, offset=offset))
        offset += len(piece)
    return out


def test_sentences_are_located_in_order() -> None:
    assert SPANS == [(0, 16), (18, 33)]
    assert RESPONSE[18:33] == "She died young."


def test_tokens_between_sentences_belong_to_none() -> None:
    owners = assign_tokens(SentenceSpans.of(PASSAGE, SPANS), _tokens())
    assert owners == [0, 0, 0, 0, -1, 1, 1, 1, 1]


def test_formulas_avg_max_of_neglogp_and_entropy() -> None:
    result = passage_scores(PASSAGE, SPANS, _tokens())
    assert result.tokens_between_sentences == 1
    scores = result.variants
    avg, passage_avg = scores["avg_neglogp"]
    assert avg == pytest.approx([6.5 / 4, 5.3 / 4])
    assert passage_avg == pytest.approx(11.8 / 8)  # all tokens inside sentences
    mx, passage_max = scores["max_neglogp"]
    assert mx == pytest.approx([3.0, 4.0]) and passage_max == pytest.approx(3.5)
    assert scores["max_entropy"][0] == pytest.approx([3.0, 2.5])


def test_backends_without_entropy_yield_only_logprob_variants() -> None:
    tokens = [TokenStats(t.token, t.logprob, None, offset=t.offset) for t in _tokens()]
    frame, diagnostics = score_records([PASSAGE], {"p": SPANS}, {"p": tokens})
    assert variants(frame) == ["avg_neglogp", "max_neglogp"]
    assert diagnostics["tokens_between_sentences"] == 1


def test_sentence_missing_from_response_names_record_and_field() -> None:
    bad = Record(id="q", response="Something else.", sentences=("Not there.",))
    with pytest.raises(RecordError, match=r"'q', field 'sentences\[0\]'"):
        SentenceSpans.of(bad, locate("Something else.", bad.sentences))


def test_unit_rows_carry_spans_and_passage_scores_are_finite() -> None:
    frame, _ = score_records([PASSAGE], {"p": SPANS}, {"p": _tokens()})
    rows = frame[(frame["variant"] == "avg_entropy") & (frame["level"] == "sentence")]
    assert rows["start"].tolist() == [0, 18] and rows["end"].tolist() == [16, 33]
    assert sentence_scores(frame, "avg_entropy")["p"] == pytest.approx([6.5 / 4, 4.6 / 4])
    assert all(math.isfinite(v) for v in record_scores(frame, "avg_entropy").values())
