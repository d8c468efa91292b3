"""CCP, cheap step: claim scores for every K <= K_max, NLI context, word unit, stop-word rule
and claim aggregation from the stored NLI classes, and the §4.1 baselines from the token
statistics. Emits claim rows, sentence rows (a sentence's most uncertain claim; 0.5 for a
sentence without an aligned claim, counted) and response rows (the mean over claims)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from hallulab.artifacts.claims import claims_by_record
from hallulab.artifacts.response_tokens import token_stats
from hallulab.core.config import ConfigError
from hallulab.core.token_stats import TokenStats
from hallulab.core.units import DetailTable, ScoreTable
from hallulab.data.schema import Record
from hallulab.methods.ccp.formula import claim_ccp, combine_nli, word_log_ccp
from hallulab.methods.ccp.knobs import BLANK_RULES, CCPKnobs
from hallulab.methods.ccp.raw import CCPClaim, CCPScores
from hallulab.methods.ccp.units import CONTEXT_NAMES, alternatives, outside_top_k, strip_word
from hallulab.methods.token_statistics import max_entropy, max_probability, perplexity
from hallulab.pipeline.context import AggregateContext, Aggregated
from hallulab.pipeline.controls import AggregateControls, KnobPoint
from hallulab.text.stopwords import is_stopword

NO_CLAIM_SENTENCE_SCORE = 0.5


class CCPMode(NamedTuple):
    """One CCP reading: K, NLI context, word merge, stop-word rule, claim aggregation and the
    rule for blank (space or punctuation) alternatives."""

    k: int
    context: str
    merge: bool
    stopwords: str
    aggregation: str
    blank: str = "neutral"

    @property
    def name(self) -> str:
        """The variant this reading writes (:func:`variant_name`)."""
        return variant_name(
            self.k,
            self.context,
            merge=self.merge,
            stopwords=self.stopwords,
            aggregation=self.aggregation,
            blank=self.blank,
        )


def variant_name(k: int, context: str, *, merge: bool, stopwords: str, aggregation: str, blank: str = "neutral") -> str:
    """``ccp_k10_claimpref`` for the paper's mode; suffixes name what differs from it
    (``_blanknli``: blank alternatives judged by the NLI model)."""
    name = f"ccp_k{k}_{CONTEXT_NAMES[context]}"
    if not merge and stopwords == "reference":
        return name + "_ref"
    if merge and blank != "neutral":
        name += f"_blank{blank}"
    if not merge:
        name += "_tokens"
    if stopwords != "paper":
        name += f"_stop{stopwords}"
    if aggregation != "prod":
        name += f"_{aggregation}"
    return name


def unit_log_ccp(
    head: TokenStats, text: str, classes: str, k: int, stopwords: str, *, words: bool, blank: str = "neutral"
) -> float:
    """log CCP of one word (or token): its alternatives up to K and their combined classes.

    With ``words`` (the paper's mode) and ``blank="neutral"``, an alternative that is only
    spaces or punctuation (a line break, a comma: a different continuation, not another value
    of the claim) counts as neutral, whatever the NLI model said of the empty string it
    compared; ``blank="nli"`` keeps the model's class (:data:`BLANK_RULES`)."""
    options = alternatives(head, k)
    if stopwords == "paper" and is_stopword(strip_word(text)):
        return 0.0
    # stopwords == "reference": lm-polygraph 0.7.0 calls its NLTK check with the token *id*
    # (its alternatives hold ids), so no token is ever a stop word there; "none" is the same.
    combined = ["e"] + [combine_nli(classes[2 * i], classes[2 * i + 1]) for i in range(len(options) - 1)]
    if words and blank == "neutral":
        combined = [c if i == 0 or strip_word(options[i][0]) else "n" for i, c in enumerate(combined)]
    return word_log_ccp([lp for _, lp in options], combined)


def _modes(knobs: CCPKnobs) -> list[CCPMode]:
    """Every reading the knobs ask for: the sweep over K and context, then Table 9 (claim
    aggregation) and Table 12 (stop words) at the largest K and the first context, the other
    rule for blank alternatives there (both readings, labelled), and the reference-compatible
    readings."""
    k_top = max(knobs.k)
    blank = knobs.blank_alternatives
    merge, stop = knobs.word_merge, knobs.stopwords
    modes = [CCPMode(k, c, merge, stop, "prod", blank) for k in knobs.k for c in knobs.nli_context]
    first = knobs.nli_context[0]
    modes += [CCPMode(k_top, first, merge, stop, a, blank) for a in knobs.claim_aggregation if a != "prod"]
    if stop != "none":
        modes.append(CCPMode(k_top, first, merge, "none", "prod", blank))
    if merge:
        modes += [CCPMode(k_top, first, merge, stop, "prod", other) for other in BLANK_RULES if other != blank]
    if knobs.reference_compatible:
        modes += [CCPMode(k_top, c, False, "reference", "prod") for c in knobs.nli_context]
    return modes


def _unit_table(
    claim_rows: Mapping[str, Mapping[str, list[tuple[int, int | None, float]]]],
    records: Mapping[str, Record],
    counts: Counter[str],
) -> ScoreTable:
    """Claim rows as scored; a sentence takes its claims' max (or the no-claim score, counted),
    a response the mean of its claims."""
    table = ScoreTable()
    for variant, by_record in claim_rows.items():
        for rid, rows in by_record.items():
            sentence_values: dict[int, list[float]] = {}
            for index, sentence_index, value in rows:
                table.add(variant, "claim", rid, index, value, sentence_index=sentence_index)
                if sentence_index is not None:
                    sentence_values.setdefault(sentence_index, []).append(value)
            record = records.get(rid)
            for s in range(len(record.sentences) if record else 0):
                values = sentence_values.get(s)
                if values is None:
                    counts["sentences_without_claims"] += 1
                table.add(
                    variant, "sentence", rid, s, max(values) if values else NO_CLAIM_SENTENCE_SCORE, sentence_index=s
                )
            table.add_response(variant, rid, float(np.mean([v for _, _, v in rows])))
    return table


def aggregate(ctx: AggregateContext[CCPScores]) -> Aggregated:
    knobs = ctx.params.typed(CCPKnobs, "ccp.aggregate")
    raw = ctx.raw
    k_max = int(raw.k_max)
    too_large = [k for k in knobs.k if k > k_max]
    if too_large:
        raise ConfigError(f"ccp.aggregate.k: {too_large} exceed K_max = {k_max} (response_tokens.top_k)")
    missing = [c for c in knobs.nli_context if c not in raw.contexts]
    if missing:
        raise ConfigError(f"ccp.aggregate.nli_context: {missing} were not scored (ccp.score.nli_contexts)")
    tokens = token_stats(ctx.artifacts["response_tokens"])
    claims = claims_by_record(ctx.artifacts["claims"])
    records = {p.id: p for p in ctx.records}
    k_top = max(knobs.k)
    first = knobs.nli_context[0]
    modes = _modes(knobs)
    counts: Counter[str] = Counter()
    details = DetailTable()
    claim_rows: dict[str, dict[str, list[tuple[int, int | None, float]]]] = {}
    for rid, entries in raw.records.items():
        record_tokens = tokens[rid]
        record_claims = {c.index: c for c in claims[rid]}
        ptrue = (raw.ptrue.get("values") or {}).get(rid)
        for entry in entries:
            claim = record_claims[entry["index"]]
            if not claim.aligned or not entry["units"].get("token"):
                continue
            words: dict[str, list[tuple[str, float]]] = {}
            scores = claim_scores(entry, claim.index, record_tokens, modes, ptrue, words)
            for variant, units in words.items():
                details.add(variant, "claim", rid, claim.index, word_details(units))
            heads = [record_tokens[unit[0]] for unit in entry["units"]["word" if knobs.word_merge else "token"]]
            counts["words_outside_top_k"] += sum(outside_top_k(head, k_top) for head in heads)
            counts["words_judged"] += len(heads)
            # a backend without vocabulary ids: the written token found in its top list by text
            counts["words_matched_by_text"] += sum(bool(head.top) and not head.ids_known for head in heads)
            if knobs.word_merge:  # alternatives 2..K of each word; the blank ones take the blank rule
                others = [text for head in heads for text, _ in alternatives(head, k_top)[1:]]
                counts["alternatives_judged"] += len(others)
                counts["alternatives_blank"] += sum(not strip_word(text) for text in others)
            for variant, value in scores.items():
                claim_rows.setdefault(variant, {}).setdefault(rid, []).append(
                    (claim.index, claim.sentence_index, value)
                )
    table = _unit_table(claim_rows, records, counts)
    blank = knobs.blank_alternatives
    headline = [
        CCPMode(k_top, first, knobs.word_merge, knobs.stopwords, "prod", blank).name,
        "maxprob",
        "perplexity",
        "max_entropy",
        "ptrue",
    ]
    diagnostics: dict[str, Any] = {
        **raw.diagnostics,
        **{f"aggregate_{k}": v for k, v in counts.items()},
        "claims_source": ctx.artifacts["claims"].get("source"),
        "claims_substitute": ctx.artifacts["claims"].get("substitute"),
        "token_source": dict(Counter(ctx.artifacts["response_tokens"]["sources"].values())),
        "proxy_llm": ctx.artifacts["response_tokens"].get("llm", {}),
        "nli": raw.nli,
        "ptrue_llm": (raw.ptrue or {}).get("llm"),
    }
    controls = AggregateControls(
        headline_variants=tuple(h for h in headline if h in claim_rows),
        knob_curve={
            CCPMode(k, c, knobs.word_merge, knobs.stopwords, "prod", blank).name: KnobPoint(
                series=f"ccp_{CONTEXT_NAMES[c]}", knob="k", value=k
            )
            for k in knobs.k
            for c in knobs.nli_context
        },
    )
    return Aggregated(table.frame(), diagnostics, controls, details.frame())


def word_details(units: Sequence[tuple[str, float]]) -> list[tuple[str, str]]:
    """The report's reading of a claim: each word with its CCP (Eq. 7 under the variant's K,
    context and word rule); the claim's score is 1 minus their product (prod)."""
    return [
        (f"word {i + 1}: {text.strip() or repr(text)}", f"CCP {math.exp(value):.3f}")
        for i, (text, value) in enumerate(units)
    ]


def claim_scores(
    entry: CCPClaim,
    claim_index: int,
    record_tokens: Sequence[TokenStats],
    modes: Sequence[tuple[int, str, bool, str, str] | CCPMode],
    ptrue: Sequence[float | None] | None,
    words: dict[str, list[tuple[str, float]]] | None = None,
) -> dict[str, float]:
    """Every variant's score of one stored claim: the baselines and each (K, context, word
    unit, stop-word rule, aggregation[, blank rule]) mode; ``words``, when given, receives each
    mode's (text, log CCP) per word (what the claim's score multiplies)."""
    out: dict[str, float] = {}
    token_units = entry["units"]["token"]
    claim_tokens = [record_tokens[i] for unit in token_units for i in unit]
    logprobs = [t.logprob for t in claim_tokens]
    out["maxprob"] = max_probability(logprobs)
    out["perplexity"] = perplexity(logprobs)
    if all(t.entropy is not None for t in claim_tokens):
        out["max_entropy"] = max_entropy([float(t.entropy or 0.0) for t in claim_tokens])
    if ptrue is not None and claim_index < len(ptrue) and ptrue[claim_index] is not None:
        out["ptrue"] = 1.0 - float(ptrue[claim_index])  # type: ignore[arg-type]
    for mode in (CCPMode(*m) for m in modes):
        units = unit_log_ccps(entry, record_tokens, mode.k, mode.context, mode.merge, mode.stopwords, mode.blank)
        out[mode.name] = claim_ccp([value for _, value in units], mode.aggregation)
        if words is not None:
            words[mode.name] = units
    return out


def unit_log_ccps(
    entry: Mapping[str, Any],
    record_tokens: Sequence[TokenStats],
    k: int,
    context: str,
    merge: bool,
    stopwords: str,
    blank: str = "neutral",
) -> list[tuple[str, float]]:
    """(text, log CCP) of each word (``merge``) or token of one stored claim, in order: what
    the claim's score multiplies (the report shows them word by word)."""
    kind = "word" if merge else "token"
    found = []
    for unit, unit_classes in zip(entry["units"][kind], entry["classes"][context][kind], strict=True):
        head = record_tokens[unit[0]]
        text = head.token if not merge else "".join(record_tokens[i].token for i in unit)
        found.append((text, unit_log_ccp(head, text, unit_classes, k, stopwords, words=merge, blank=blank)))
    return found


def variant_modes(knobs: CCPKnobs) -> dict[str, CCPMode]:
    """Each CCP variant the knobs write -> its reading."""
    return {mode.name: mode for mode in _modes(knobs)}
