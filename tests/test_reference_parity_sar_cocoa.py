"""SAR (TokenSAR, SentenceSAR, SAR; Duan et al., 2024) and CoCoA (CocoaMSP, CocoaPPL, CocoaMTE;
Vashurin et al., 2025) equal lm-polygraph 0.7.0's estimators of those names, at two values of
the temperature t and two values of N.

lm-polygraph's similarities come from its own calculators, ``CrossEncoderSimilarityMatrixCalculator``
(the samples' matrix, over their unique texts, and each token's similarity with the token
removed, by decoding the other tokens after ``input + " "``) and
``GreedyCrossEncoderSimilarityMatrixCalculator`` (the response against each sample, both orders
averaged), run on a stand-in cross-encoder whose score is a fixed, asymmetric function of the two
texts' words, and a stand-in tokenizer that cuts a text into pieces of at most four characters
(a space leading a piece stays with it; decoding joins the pieces). hallulab's side sends the
same function through its score steps' requests (:func:`sar_records`, :func:`response_similarities`),
its tokens as token statistics with the pieces' offsets, and runs each method's aggregate step.
The log-probabilities and entropies are fixed arrays, the same on both sides. Both sides do the
same float64 arithmetic in the same order, so the scores are compared for exact equality.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from hallulab.core.token_stats import TokenStats
from hallulab.data.schema import Record
from hallulab.methods.cocoa import SPEC as COCOA
from hallulab.methods.cocoa.aggregate import aggregate as cocoa_aggregate
from hallulab.methods.cocoa.raw import CocoaScores
from hallulab.methods.cocoa.score import response_similarities
from hallulab.methods.sar import SPEC as SAR
from hallulab.methods.sar.aggregate import aggregate as sar_aggregate
from hallulab.methods.sar.raw import SarScores
from hallulab.methods.sar.score import sar_records
from hallulab.pipeline.context import AggregateContext
from hallulab.pipeline.params import ParamsView

pytestmark = pytest.mark.reference

#: a short answer's record: a duplicate sample, a one-piece sample ("Yes."), a contradicting one
PLANTED = Record(
    id="planted",
    prompt="Where was she born?",
    response="She was born in Warsaw.",
    sentences=("She was born in Warsaw.",),
    samples=(
        "She was born in Warsaw in 1867.",
        "Yes.",
        "She was born in Warsaw in 1867.",
        "He died in Paris, never in Warsaw.",
        "Born in Warsaw, she was.",
    ),
)


def _words(text: str) -> set[str]:
    return set(text.lower().replace(",", " ").replace(".", " ").split())


def _similarity(first: str, second: str) -> float:
    """In [0, 1], asymmetric: the share of the second text's words the first holds, with a
    length term that tells a text from the same text with a piece cut out."""
    a, b = _words(first), _words(second)
    covered = len(a & b) / max(len(b), 1)
    lengths = min(len(first), len(second)) / max(len(first), len(second), 1)
    return 0.6 * covered + 0.3 * lengths + 0.1 * (len(first) % 5) / 5


def _similarities(firsts: Sequence[str], seconds: Sequence[str]) -> np.ndarray:
    return np.asarray([_similarity(a, b) for a, b in zip(firsts, seconds, strict=True)], dtype=np.float64)


class _Pieces:
    """The stand-in tokenizer: pieces of at most four characters, a leading space kept."""

    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}
        self.added_tokens_decoder: dict[int, str] = {}

    @staticmethod
    def pieces(text: str) -> list[str]:
        found = re.findall(r" ?[^ ]{1,4}| ", text)
        assert "".join(found) == text
        return found

    def ids(self, text: str) -> list[int]:
        return [self.vocabulary.setdefault(p, len(self.vocabulary)) for p in self.pieces(text)]

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        names = {i: p for p, i in self.vocabulary.items()}
        return "".join(names[int(i)] for i in ids)


class _StandInCrossEncoder:
    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 10) -> np.ndarray:
        return _similarities([a for a, _ in pairs], [b for _, b in pairs])


def _calculator(cls: type) -> Any:
    calculator = cls()
    calculator.crossencoder = _StandInCrossEncoder()
    calculator.crossencoder_setup = True
    return calculator


def _passages(toy_passages: list[Record]) -> list[Record]:
    return [*toy_passages, PLANTED]


def _log_likelihoods(text: str, seed: int) -> list[float]:
    rng = np.random.default_rng([seed, len(text)])
    return [float(-abs(v)) for v in rng.normal(1.0, 1.5, size=len(_Pieces.pieces(text)))]


def _tokens(text: str, seed: int) -> list[TokenStats]:
    pieces = _Pieces.pieces(text)
    offsets = np.cumsum([0, *map(len, pieces[:-1])])
    rng = np.random.default_rng([seed, len(text), 7])
    return [
        TokenStats(token=p, logprob=lp, entropy=float(h), offset=int(o))
        for p, lp, o, h in zip(
            pieces, _log_likelihoods(text, seed), offsets, rng.uniform(0.1, 4.0, len(pieces)), strict=True
        )
    ]


def _sample_tokens(records: list[Record]) -> dict[str, list[list[TokenStats]]]:
    return {p.id: [_tokens(s, 10 + j) for j, s in enumerate(p.samples)] for p in records}


def _response_tokens(records: list[Record]) -> dict[str, list[TokenStats]]:
    return {p.id: _tokens(p.response or "", 1) for p in records}


def _view(spec: Any, params: dict[str, Any], stage: str) -> ParamsView:
    return ParamsView(params, spec.aggregate.param_keys(), stage)


def _samples(n: int) -> dict[str, Any]:
    return {"used": n, "selection": "first", "seed": 0}


def _frame_scores(frame: Any, variant: str, records: list[Record]) -> np.ndarray:
    chosen = frame[frame["variant"] == variant].set_index("record_id")
    return chosen.loc[[p.id for p in records], "score"].to_numpy(dtype=np.float64)


# ------------------------------------------------------------------------------------------ SAR


def _sar_ours(records: list[Record], n: int, temperature: float) -> dict[str, np.ndarray]:
    by_record, _ = sar_records(
        records, _sample_tokens(records), _response_tokens(records), _similarities, token_relevance=True
    )
    raw = SarScores(proxy={}, similarity={}, prefix="{prompt}", token_relevance=True, records=by_record, diagnostics={})
    params = {"sar": {"aggregate": {"temperature": temperature}}, "samples": _samples(n)}
    ctx = AggregateContext("t", records, {}, raw, _view(SAR, params, "aggregate_sar"))
    frame = sar_aggregate(ctx).scores
    return {v: _frame_scores(frame, v, records) for v in ("sar", "sentence_sar", "token_sar")}


def _sar_theirs(records: list[Record], n: int, temperature: float) -> dict[str, np.ndarray]:
    from lm_polygraph.estimators import SAR as PolygraphSAR
    from lm_polygraph.estimators import SentenceSAR, TokenSAR
    from lm_polygraph.stat_calculators.cross_encoder_similarity import CrossEncoderSimilarityMatrixCalculator

    tokenizer = _Pieces()
    samples = [list(p.samples[:n]) for p in records]
    sample_lls = [[_log_likelihoods(s, 10 + j) for j, s in enumerate(texts)] for texts in samples]
    stats: dict[str, Any] = {
        "input_texts": [p.prompt for p in records],
        "sample_texts": samples,
        "sample_tokens": [[tokenizer.ids(s) for s in texts] for texts in samples],
        "greedy_tokens": [tokenizer.ids(p.response or "") for p in records],
        "sample_log_likelihoods": sample_lls,
        "sample_log_probs": [[sum(lls) for lls in lls_of] for lls_of in sample_lls],
        "greedy_log_likelihoods": [_log_likelihoods(p.response or "", 1) for p in records],
    }
    model = SimpleNamespace(device=lambda: "cpu", tokenizer=tokenizer)
    stats |= _calculator(CrossEncoderSimilarityMatrixCalculator)(stats, texts=[], model=model)
    estimators = {"sar": PolygraphSAR(), "sentence_sar": SentenceSAR(), "token_sar": TokenSAR()}
    for name in ("sar", "sentence_sar"):
        estimators[name].t = temperature
    return {name: np.asarray(estimator(stats), dtype=np.float64) for name, estimator in estimators.items()}


@pytest.mark.parametrize("temperature", [0.001, 0.05])
def test_sar_equals_lm_polygraphs_estimators(toy_passages: list[Record], temperature: float) -> None:
    records = _passages(toy_passages)
    for n in (3, 5):
        ours, theirs = _sar_ours(records, n, temperature), _sar_theirs(records, n, temperature)
        for variant in ("sar", "sentence_sar", "token_sar"):
            np.testing.assert_array_equal(ours[variant], theirs[variant], err_msg=f"{variant}, N={n}")
    # the records, N and t separate what they must
    assert all(len(set(scores.tolist())) == len(records) for scores in ours.values())
    assert not np.array_equal(_sar_ours(records, 3, temperature)["sar"], ours["sar"])
    assert not np.array_equal(_sar_ours(records, 5, temperature * 4)["sentence_sar"], ours["sentence_sar"])


# ---------------------------------------------------------------------------------------- CoCoA


def _cocoa_ours(records: list[Record], n: int) -> dict[str, np.ndarray]:
    raw = CocoaScores(similarity={}, records=response_similarities(records, _similarities), diagnostics={})
    tokens = {
        p.id: [t.to_dict() for t in stats] for p, stats in zip(records, _response_tokens(records).values(), strict=True)
    }
    artifact = {"tokens": tokens, "sources": {p.id: "proxy" for p in records}, "llm": {}}
    params = {"samples": _samples(n)}
    ctx = AggregateContext("t", records, {"response_tokens": artifact}, raw, _view(COCOA, params, "aggregate_cocoa"))
    frame = cocoa_aggregate(ctx).scores
    return {v: _frame_scores(frame, v, records) for v in ("cocoa_msp", "cocoa_ppl", "cocoa_mte")}


def _cocoa_theirs(records: list[Record], n: int) -> dict[str, np.ndarray]:
    from lm_polygraph.estimators import CocoaMSP, CocoaMTE, CocoaPPL
    from lm_polygraph.stat_calculators.greedy_cross_encoder_similarity import (
        GreedyCrossEncoderSimilarityMatrixCalculator,
    )

    response_tokens = _response_tokens(records)
    stats: dict[str, Any] = {
        "input_texts": [p.prompt for p in records],
        "sample_texts": [list(p.samples[:n]) for p in records],
        "greedy_texts": [p.response for p in records],
        "greedy_log_likelihoods": [[t.logprob for t in response_tokens[p.id]] for p in records],
        "entropy": [[t.entropy for t in response_tokens[p.id]] for p in records],
    }
    model = SimpleNamespace(device=lambda: "cpu")
    stats |= _calculator(GreedyCrossEncoderSimilarityMatrixCalculator)(stats, texts=[], model=model)
    estimators = {"cocoa_msp": CocoaMSP(), "cocoa_ppl": CocoaPPL(), "cocoa_mte": CocoaMTE()}
    return {name: np.asarray(estimator(stats), dtype=np.float64) for name, estimator in estimators.items()}


def test_cocoa_equals_lm_polygraphs_estimators(toy_passages: list[Record]) -> None:
    records = _passages(toy_passages)
    for n in (3, 5):
        ours, theirs = _cocoa_ours(records, n), _cocoa_theirs(records, n)
        for variant in ("cocoa_msp", "cocoa_ppl", "cocoa_mte"):
            np.testing.assert_array_equal(ours[variant], theirs[variant], err_msg=f"{variant}, N={n}")
    assert all(len(set(scores.tolist())) == len(records) for scores in ours.values())
    assert not np.array_equal(_cocoa_ours(records, 3)["cocoa_msp"], ours["cocoa_msp"])


def test_the_stand_in_tokenizer_decodes_what_the_offsets_cut() -> None:
    """What lets the two sides meet: decoding the pieces without piece i is the text with piece
    i's characters cut out, the text hallulab's relevance pairs read."""
    from hallulab.methods.sar.relevance import relevance_pairs

    tokenizer = _Pieces()
    text = PLANTED.samples[3]
    ids = tokenizer.ids(text)
    pairs = relevance_pairs(PLANTED.prompt, text, _tokens(text, 0))
    expected = [
        (f"{PLANTED.prompt} {text}", f"{PLANTED.prompt} {tokenizer.decode(ids[:i] + ids[i + 1 :])}")
        for i in range(len(ids))
    ]
    assert pairs == expected and len(ids) > 5
