"""CCP, expensive step: the NLI class of every (word, alternative) pair of every aligned
claim, in both directions, for the configured NLI contexts, word units and K_max; and the
P(True) of every claim from the ``proxy`` LLM role. No sweep knob: K, the context used,
the stop-word rule and the claim aggregation are applied by the aggregate step."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hallulab.artifacts.claims import Claim, claims_by_record
from hallulab.artifacts.response_tokens import token_stats
from hallulab.artifacts.sentences import spans_by_record
from hallulab.core.token_stats import TokenStats
from hallulab.data.schema import Record
from hallulab.llm.base import DecodingParams, require_token_stats
from hallulab.methods.ccp.formula import CONTRA, ENTAIL, NEUTRAL
from hallulab.methods.ccp.knobs import CCPScoreKnobs
from hallulab.methods.ccp.raw import CCPClaim, CCPPTrue, CCPScores
from hallulab.methods.ccp.units import alternatives, claim_words, nli_pairs
from hallulab.methods.skipped import HAS_RESPONSE, partition, present_in
from hallulab.nli.scorer import NLIKnobs, NLIScorer
from hallulab.pipeline.context import BuildContext


def nli_class(probabilities: np.ndarray) -> str:
    """argmax over (entailment, neutral, contradiction); a tie goes to entailment, then
    contradiction (lm-polygraph's dictionary order)."""
    entail, neutral, contra = (float(x) for x in probabilities)
    if entail >= contra and entail >= neutral:
        return ENTAIL
    return CONTRA if contra >= neutral else NEUTRAL


@dataclass
class NLIRequests:
    """Every (premise, hypothesis) pair CCP needs, where each result goes, and the layout of
    the stored classes: per record, per claim, per context and unit kind, one string per word
    holding the forward and backward class of each alternative in top-K order."""

    pairs: list[tuple[str, str]] = field(default_factory=list)
    slots: list[tuple[str, int, str, str, int]] = field(default_factory=list)  # record, claim, kind, context, word
    layout: dict[str, list[CCPClaim]] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)


def nli_requests(
    records: Sequence[Record],
    tokens: Mapping[str, Sequence[TokenStats]],
    claims: Mapping[str, Sequence[Claim]],
    sentence_spans: Mapping[str, Sequence[tuple[int, int] | None]],
    contexts: Sequence[str],
    k_max: int,
) -> NLIRequests:
    """The NLI pairs of every aligned claim, for both word units (pure: no model)."""
    out = NLIRequests()
    for record in records:
        if record.id not in tokens or record.id not in claims:
            continue
        response = record.response or ""
        record_tokens = tokens[record.id]
        out.layout[record.id] = []
        for claim in claims[record.id]:
            entry: CCPClaim = {"index": claim.index, "units": {}, "classes": {}}
            out.layout[record.id].append(entry)
            if not claim.aligned:
                out.counts["claims_unaligned"] += 1
                continue
            start = 0
            if claim.sentence_index is not None:
                span = sentence_spans[record.id][claim.sentence_index]
                start = span[0] if span else 0
            for kind, merge in (("word", True), ("token", False)):
                words = claim_words(claim.spans, record_tokens, response, word_merge=merge)
                entry["units"][kind] = [list(w.tokens) for w in words]
                if not words:
                    out.counts[f"claims_without_{kind}s"] += 1
                for context in contexts:
                    entry["classes"].setdefault(context, {})[kind] = ["" for _ in words]
                    for w_index, word in enumerate(words):
                        head = record_tokens[word.head]
                        greedy_text = word.text if merge else head.token
                        before = response[start : head.offset if head.offset is not None else start]
                        for alt_text, _ in alternatives(head, k_max)[1:]:
                            premise, hypothesis = nli_pairs(
                                context, word, words[:w_index], greedy_text, alt_text, before
                            )
                            out.pairs.extend([(premise, hypothesis), (hypothesis, premise)])
                            out.slots.append((record.id, claim.index, kind, context, w_index))
            out.counts["claims_scored"] += 1
    return out


def fill_classes(requests: NLIRequests, classes: Sequence[str]) -> dict[str, list[CCPClaim]]:
    """Put each pair's class where it belongs (forward, then backward, per alternative)."""
    by_claim = {(rid, e["index"]): e for rid, entries in requests.layout.items() for e in entries}
    for slot_index, (rid, claim_index, kind, context, w_index) in enumerate(requests.slots):
        per_word = by_claim[(rid, claim_index)]["classes"][context][kind]
        per_word[w_index] += classes[2 * slot_index] + classes[2 * slot_index + 1]
    return requests.layout


def score(ctx: BuildContext) -> CCPScores:
    knobs = ctx.params.typed(CCPScoreKnobs, "ccp.score")
    raw_tokens = ctx.artifacts["response_tokens"]
    claims = claims_by_record(ctx.artifacts["claims"])
    tokens = token_stats(raw_tokens)
    chosen = partition(
        ctx.records, HAS_RESPONSE, present_in(tokens, "no token statistics"), present_in(claims, "no claims")
    )
    chosen.warn(ctx.log, "CCP")
    requests = nli_requests(
        chosen.kept,
        tokens,
        claims,
        spans_by_record(ctx.artifacts["sentences"]),
        knobs.nli_contexts,
        int(raw_tokens["top_k"]),
    )
    scorer = NLIScorer(ctx.params.typed(NLIKnobs, "nli"), cache=ctx.resources.cache)
    premises, hypotheses = [p for p, _ in requests.pairs], [h for _, h in requests.pairs]
    probabilities = scorer.class_probs(premises, hypotheses, progress=True)
    layout = fill_classes(requests, [nli_class(row) for row in probabilities])
    counts = requests.counts
    counts["nli_pairs"] = len(requests.pairs)
    counts["nli_pairs_truncated"] = scorer.truncated_pairs(premises, hypotheses)
    ptrue = _p_true(ctx, claims, knobs, counts)
    return CCPScores(
        k_max=int(raw_tokens["top_k"]),
        contexts=list(knobs.nli_contexts),
        nli={"name": scorer.config.name, **scorer.identity},
        records=layout,
        ptrue=ptrue,
        diagnostics={**dict(counts), **chosen.diagnostics()},
    )


def _p_true(ctx: BuildContext, claims: dict[str, Any], knobs: CCPScoreKnobs, counts: Counter[str]) -> CCPPTrue:
    """P(first reply token = "True") for every claim, asking the proxy LLM (Eq. 4)."""
    template = ctx.resources.prompt("ccp.ptrue_prompt")
    llm = ctx.resources.llm("proxy")
    questions = {p.id: p.prompt or "" for p in ctx.records}
    slots = [(rid, claim.index) for rid, record in claims.items() for claim in record if rid in questions]
    prompts = [
        template.messages(question=questions[rid], claim=claim.text)
        for rid, record in claims.items()
        for claim in record
        if rid in questions
    ]
    white_box = llm.capabilities.top_k_alternatives
    params = DecodingParams(max_new_tokens=1, temperature=0.0, top_k_alternatives=knobs.ptrue_top_k if white_box else 0)
    replies = llm.generate(prompts, params) if prompts else []
    if white_box:
        require_token_stats(replies, "proxy", "P(True) (the first reply token's top-K)", knobs.ptrue_top_k)
    out: dict[str, list[float | None]] = {}
    for (rid, _), reply in zip(slots, replies, strict=True):
        probability = p_true(reply.tokens)
        counts["ptrue_true_not_in_top_k"] += probability == 0.0
        out.setdefault(rid, []).append(probability)
    return {"llm": ctx.resources.llm_name("proxy"), "values": out}


def p_true(tokens: Any) -> float:
    """P("True") of the first reply token: the probability mass of "True" among its top-K
    (case-insensitive, stripped); 0 when it is not there."""
    if not tokens:
        return 0.0
    first = tokens[0]
    candidates = first.top or ((first.token, first.logprob),)
    return float(sum(np.exp(lp) for text, lp in candidates if text.strip().lower() == "true"))
