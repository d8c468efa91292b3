"""Self-Familiarity, cheap step: concept familiarity (Eq. 5), instruction familiarity
(Eq. 7 and Table 4's alternatives), Table 2's baselines, and each variant's threshold from
the basic records.

Variants (all hallucination scores, higher = refuse):

* ``selffam``: 1 - s_f, weighted mean over the ranked concepts with weights r^-rank (Eq. 7),
  with s_i as the released code computed it (``length_normalisation: total``): the best
  constrained answer's log-probability divided by the length of prompt + answer,
  s_i = exp(sum / (P + L)), which is what transformers' beam scorer returned as
  ``sequences_scores`` for a decoder-only model before transformers 4.36, the version the
  paper's code (soap117/Self-evaluation) ran on; P counts BOS + the released wrapper
  ``USER: … ASSISTANT:`` around the masked instruction, L the answer's tokens without an
  ending EOS token (whose log-probability the sum includes), and the best answer is the
  search's first, ranked by that same score;
* ``selffam_min`` (Table 4, Minimal Only) and ``selffam_first`` (Most Infrequent Only);
* ``selffam_nogrouping`` / ``_nofiltering`` / ``_noranking``: Table 4's processing ablations
  (when the score step scored those processings), with the same s_i as ``selffam``;
* ``selffam_answernorm``: s_i normalised by the answer's length only (Eq. 5 read literally,
  and what transformers 4.36 and later return), the best of the returned answers by that
  score; a labelled variant, because the paper's numbers were not made with it;
* ``selffam_inputnorm``: P counted on the model's input as it was given (a chat template's
  rendering, its default system prompt included: this project's earlier reading), the best
  of the returned answers by that score; a labelled variant. The chosen
  ``length_normalisation`` is ``selffam``; the other two are ``selffam_<name>norm``;
* ``greedy_perplexity``, ``greedy_avglogp``, ``greedy_minlogp`` (Appendix C.1-C.3): the
  perplexity, -mean and -min token log-probability of the greedy response;
* ``sample_bertscore``, ``sample_sentencescore`` (C.5-C.6): 1 - the central sample's mean similarity;
* ``self_detection`` (C.4): the entropy of the answers to T_s rephrasings, clustered by
  semantic equivalence (Zhao et al., 2023; higher = less consistent = refuse);
* ``forward_inference``, ``forward_self`` (C.7-C.8, Eq. 23 / 26): 1 - s where s = P(reply) when
  the reply says yes (any case) and 1 - P(reply) otherwise; ``_pyes``: 1 - P(Yes) / (P(Yes) +
  P(No)) of the first reply token, the reading that needs no reply format (0.5 when neither
  word is in the top-K; counted).

A concept the model could not be made to name (nothing to force, or no constrained answer
within the length) has familiarity 0, as the released code scores a failed search.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from hallulab.artifacts.concepts import Concept, concepts_by_record
from hallulab.artifacts.response_tokens import token_stats
from hallulab.core.units import ScoreTable
from hallulab.methods.self_familiarity.knobs import NORMALISATIONS, SelfFamiliarityKnobs, ThresholdKnobs
from hallulab.methods.self_familiarity.raw import ConceptSearch, ForwardReply, SelfFamiliarityScores
from hallulab.methods.self_familiarity.threshold import basic_threshold
from hallulab.methods.skipped import skip_diagnostics
from hallulab.methods.token_statistics import max_neglogp, mean_neglogp, perplexity
from hallulab.pipeline.context import AggregateContext, Aggregated
from hallulab.pipeline.controls import AggregateControls

ABLATIONS = {
    "no_grouping": "selffam_nogrouping",
    "no_filtering": "selffam_nofiltering",
    "no_ranking": "selffam_noranking",
}


def prompt_length(entry: ConceptSearch, normalisation: str) -> int:
    """P of a normalisation: the released wrapper's (``total``), the model's input (``input``), 0."""
    if normalisation == "answer":
        return 0
    released = int(entry.get("prompt_tokens", 0))
    return released if normalisation == "total" else int(entry.get("input_tokens", released))


def concept_familiarity(entry: ConceptSearch, normalisation: str) -> float:
    """s_i of Eq. 5: the best returned constrained answer's probability exp(sum / (P + L)),
    P as ``normalisation`` says (:func:`prompt_length`); 0 without an answer. With ``total``
    the best is the search's first (it ranks by that score)."""
    hypotheses = entry.get("hypotheses") or []
    if not hypotheses:
        return 0.0
    extra = prompt_length(entry, normalisation)
    return max(math.exp(float(h["logprob"]) / max(int(h["length"]) + extra, 1)) for h in hypotheses)


def weighted_familiarity(scores: Sequence[float], ratio: float) -> float:
    """Eq. 7: sum_i r^-i s_i / sum_i r^-i over the concepts in rank order (i = 0, 1, ...)."""
    weights = ratio ** -np.arange(len(scores), dtype=np.float64)
    return float(np.dot(weights, scores) / weights.sum())


def yes_in(reply: str) -> bool:
    return any(form in reply for form in ("yes", "Yes", "YES"))


def forward_familiarity(reply: ForwardReply) -> float | None:
    """Eq. 23 / 26: P(reply) if it says yes, else 1 - P(reply); None without token log-probs."""
    logprob = reply.get("logprob")
    if logprob is None:
        return None
    probability = math.exp(float(logprob))
    return probability if yes_in(str(reply["text"])) else 1.0 - probability


def format_free_yes(reply: ForwardReply) -> float | None:
    """P(Yes) / (P(Yes) + P(No)) of the first reply token; None when neither is in its top-K."""
    mass = {"yes": 0.0, "no": 0.0}
    for token, logprob in reply.get("first_top") or []:
        key = str(token).strip().strip(".:,!").lower()
        if key in mass:
            mass[key] += math.exp(float(logprob))
    total = mass["yes"] + mass["no"]
    return None if total == 0 else mass["yes"] / total


def _instruction_scores(
    records: Mapping[str, list[Concept]], familiarity: Mapping[str, float], ratio: float
) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for rid, concepts in records.items():
        values = [familiarity[c.text] for c in concepts if c.text in familiarity]
        if not values:
            continue
        out[rid] = {"weighted": weighted_familiarity(values, ratio), "min": min(values), "first": values[0]}
    return out


def _greedy(tokens: Sequence[Any]) -> dict[str, float]:
    logprobs = np.asarray([t.logprob for t in tokens], dtype=np.float64)
    logprobs = logprobs[np.isfinite(logprobs)]
    if logprobs.size == 0:
        return {}
    return {
        "greedy_perplexity": perplexity(logprobs),
        "greedy_avglogp": mean_neglogp(logprobs),
        "greedy_minlogp": max_neglogp(logprobs),
    }


def _baseline_scores(
    ctx: AggregateContext[SelfFamiliarityScores],
    raw: SelfFamiliarityScores,
    put: Callable[[str, str, float | None], None],
    counts: Counter[str],
) -> None:
    """Table 2's baselines as hallucination scores (higher: less familiar), through ``put``."""
    tokens = token_stats(ctx.artifacts["response_tokens"])
    for record in ctx.records:
        if record.id in tokens and record.id in raw.baselines:
            for variant, value in _greedy(tokens[record.id]).items():
                put(variant, record.id, value)
    for rid, found in raw.baselines.items():
        for name in ("sample_bertscore", "sample_sentencescore"):
            if name in found:
                similarity = found[name]
                put(name, rid, None if similarity is None else 1.0 - float(similarity))
        if "self_detection" in found:
            put("self_detection", rid, found["self_detection"]["entropy"])
        for forward in ("forward_inference", "forward_self"):
            if forward in found:
                reading = forward_familiarity(found[forward])
                put(forward, rid, None if reading is None else 1.0 - reading)
                free = format_free_yes(found[forward])
                counts[f"{forward}_pyes_not_in_top_k"] += free is None
                put(f"{forward}_pyes", rid, 1.0 - (0.5 if free is None else free))
                counts[f"{forward}_replies_{'yes' if yes_in(str(found[forward]['text'])) else 'other'}"] += 1


def aggregate(ctx: AggregateContext[SelfFamiliarityScores]) -> Aggregated:
    knobs = ctx.params.typed(SelfFamiliarityKnobs, "self_familiarity.aggregate")
    threshold_cfg = ctx.params.typed(ThresholdKnobs, "self_familiarity.threshold")
    raw = ctx.raw
    counts: Counter[str] = Counter(raw.counts)
    scored = raw.concepts
    scores: dict[str, dict[str, float]] = {}  # variant -> record -> hallucination score

    def put(variant: str, rid: str, value: float | None) -> None:
        if value is None or not math.isfinite(value):
            counts[f"{variant}_unscored"] += 1
            return
        scores.setdefault(variant, {})[rid] = value

    familiarity = {
        name: {text: concept_familiarity(entry, name) for text, entry in scored.items()} for name in NORMALISATIONS
    }
    chosen = familiarity[knobs.length_normalisation]
    processings = raw.knobs["processings"]
    full = concepts_by_record(ctx.artifacts["concepts"], "full")
    main = _instruction_scores(full, chosen, knobs.ratio)
    for rid, values in main.items():
        put("selffam", rid, 1.0 - values["weighted"])
        put("selffam_min", rid, 1.0 - values["min"])
        put("selffam_first", rid, 1.0 - values["first"])
    for other in NORMALISATIONS:
        if other != knobs.length_normalisation:
            for rid, values in _instruction_scores(full, familiarity[other], knobs.ratio).items():
                put(f"selffam_{other}norm", rid, 1.0 - values["weighted"])
    for processing, variant in ABLATIONS.items():
        if processing in processings:
            records = concepts_by_record(ctx.artifacts["concepts"], processing)
            for rid, values in _instruction_scores(records, chosen, knobs.ratio).items():
                put(variant, rid, 1.0 - values["weighted"])

    _baseline_scores(ctx, raw, put, counts)

    split = {p.id: p.meta.get("split") for p in ctx.records}
    table = ScoreTable()
    thresholds: dict[str, float | None] = {}
    refusals: dict[str, dict[str, int]] = {}
    for variant, by_record in scores.items():
        basic = [v for rid, v in by_record.items() if split.get(rid) == "basic"]
        threshold, interval = basic_threshold(basic, threshold_cfg)
        counts["thresholds_percentile_where_bca_undefined"] += interval != threshold_cfg.method
        thresholds[variant] = None if math.isnan(threshold) else threshold
        tested = [v for rid, v in by_record.items() if split.get(rid) != "basic"]
        if not math.isnan(threshold):
            refusals[variant] = {
                "refused": int(sum(v > threshold for v in tested)),
                "answered": int(sum(v <= threshold for v in tested)),
            }
        for rid, value in by_record.items():
            table.add(variant, "prompt", rid, 0, value)
    counts["basic_records"] = sum(s == "basic" for s in split.values())
    diagnostics: dict[str, Any] = {
        "counts": dict(counts),
        "thresholds_from": (
            f"{counts['basic_records']} basic records "
            f"({threshold_cfg.method} bootstrap interval of the {threshold_cfg.basic_percentile:g}th percentile "
            "of their familiarity)"
        ),
        "decisions_on_test_records": refusals,
        "concept_familiarity": {text: round(value, 6) for text, value in chosen.items()},
        **skip_diagnostics(raw.skipped_record_ids),
    }
    controls = AggregateControls(thresholds={k: v for k, v in thresholds.items() if v is not None})
    return Aggregated(table.frame(), diagnostics, controls)
