"""HalluCheck, cheap step: fact flags from the stored regenerations (alignment measure and
threshold, KS level and steps are knobs), response score = share of hallucinated facts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hallulab.config import setting
from hallulab.methods.hallucheck.checks import ALIGNMENTS, contained, guessed, token_f1
from hallulab.pipeline.context import AggregateContext, Aggregated
from hallulab.units import ScoreTable

NO_FACT_SENTENCE_SCORE = 0.5


@dataclass(frozen=True)
class HalluCheckKnobs:
    """params ``hallucheck.aggregate``."""

    alignment: str = setting("f1", choices=ALIGNMENTS)
    f1_threshold: float = setting(0.6, minimum=0.0, maximum=1.0, doc="aligned when token F1 >= this")
    ks_alpha: float = setting(0.05, above=0.0, maximum=1.0, doc="a step is uniform when the KS p-value exceeds this")
    ks_steps: int = setting(50, minimum=1, doc="generated steps tested")
    no_fact_score: float = setting(1.0, minimum=0.0, maximum=1.0, doc="response score when no fact could be checked")


def fact_flag(entry: Mapping[str, Any], key: str, knobs: HalluCheckKnobs, *, probability_check: bool) -> bool | None:
    """True = hallucinated, None = not checkable (no question)."""
    if entry.get("question") is None:
        return None
    answer = entry["answers"][key]
    if knobs.alignment == "f1":
        aligned = token_f1(answer["text"], entry["text"]) >= knobs.f1_threshold
    elif knobs.alignment == "containment":
        aligned = contained(entry["text"], answer["text"])
    else:
        verdict = (entry.get("judge") or {}).get(key)
        if verdict is None:
            return None
        aligned = bool(verdict)
    if not aligned:
        return True
    return probability_check and guessed(answer["top"], knobs.ks_alpha, knobs.ks_steps)


def variant_name(tagging: str, key: str, *, probability_check: bool) -> str:
    role, decoding = key.split("/")
    name = f"hallucheck_{tagging}_{decoding}"
    if role == "verifier":
        name += "_crosseval"
    return name if probability_check else name + "_align"


def aggregate(ctx: AggregateContext) -> Aggregated:
    assert ctx.raw is not None
    knobs = ctx.params.typed(HalluCheckKnobs, "hallucheck.aggregate")
    raw = ctx.raw
    passages = {p.id: p for p in ctx.passages}
    table = ScoreTable()
    counts: Counter[str] = Counter()
    for tagging in raw["taggings"]:
        for key in raw["regenerations"]:
            for probability_check in (True, False):
                name = variant_name(tagging, key, probability_check=probability_check)
                for rid, by_tag in raw["records"].items():
                    entries = by_tag.get(tagging, [])
                    flags: list[bool] = []
                    by_sentence: dict[int, list[float]] = {}
                    for entry in entries:
                        flag = fact_flag(entry, key, knobs, probability_check=probability_check)
                        if flag is None:
                            counts[f"{name}_facts_unchecked"] += 1
                            continue
                        flags.append(flag)
                        counts[f"{name}_facts_{'hallucinated' if flag else 'passed'}"] += 1
                        table.add(
                            name, "fact", rid, entry["index"], float(flag), sentence_index=entry["sentence_index"]
                        )
                        by_sentence.setdefault(entry["sentence_index"], []).append(float(flag))
                    passage = passages.get(rid)
                    for s in range(len(passage.sentences) if passage else 0):
                        values = by_sentence.get(s)
                        table.add(
                            name,
                            "sentence",
                            rid,
                            s,
                            max(values) if values else NO_FACT_SENTENCE_SCORE,
                            sentence_index=s,
                        )
                    if not flags:
                        counts[f"{name}_responses_without_checkable_facts"] += 1
                    table.add_response(name, rid, float(np.mean(flags)) if flags else knobs.no_fact_score)
    for tagging in raw["taggings"]:
        _fact_nll_variant(tagging, raw, passages, table, counts)
    decision_paths = _decision_paths(raw, knobs)
    diagnostics: dict[str, Any] = {
        **raw.get("diagnostics", {}),
        **dict(counts),
        "decision_paths": decision_paths,
        "llms": raw.get("llms", {}),
        "headline_variants": [
            n
            for n in (
                "hallucheck_ner_greedy",
                "hallucheck_ner_greedy_align",
                "hallucheck_ner_greedy_crosseval",
                "hallucheck_ner_factnll",
            )
            if n in set(table.frame()["variant"])
        ],
    }
    return Aggregated(table.frame(), diagnostics)


def fact_nll(logprobs: Sequence[float]) -> float | None:
    """The mean negative log-probability of a fact's tokens given its question; None without tokens."""
    return float(-np.mean(logprobs)) if len(logprobs) else None


def _fact_nll_variant(
    tagging: str,
    raw: Mapping[str, Any],
    passages: Mapping[str, Any],
    table: ScoreTable,
    counts: Counter[str],
) -> None:
    """``hallucheck_<tagging>_factnll``: fact score = mean NLL of the fact as the generator's
    answer to its question; sentence and response = the max over their facts (the least
    probable fact decides, as one hallucinated fact makes the response wrong). On this
    unbounded scale the flag variants' fallbacks become: a sentence without a scored fact
    gets the median fact score of the data set (neutral, as 0.5 is there), a response
    without one the largest response score (no checkable fact = hallucinated); both counted."""
    name = f"hallucheck_{tagging}_factnll"
    records = raw["records"]
    if not any("fact_logprobs" in e for by_tag in records.values() for e in by_tag.get(tagging, [])):
        return  # the score step stored no fact probabilities (a black-box generator, or switched off)
    by_record: dict[str, dict[int, list[float]]] = {}
    for rid, by_tag in records.items():
        by_sentence = by_record.setdefault(rid, {})
        for entry in by_tag.get(tagging, []):
            value = fact_nll(entry["fact_logprobs"]) if "fact_logprobs" in entry else None
            if value is None:
                continue
            table.add(name, "fact", rid, entry["index"], value, sentence_index=entry["sentence_index"])
            by_sentence.setdefault(entry["sentence_index"], []).append(value)
    every_fact = [v for by_sentence in by_record.values() for values in by_sentence.values() for v in values]
    neutral = float(np.median(every_fact)) if every_fact else 0.0
    responses = {rid: max((max(v) for v in by_s.values()), default=None) for rid, by_s in by_record.items()}
    worst = max((v for v in responses.values() if v is not None), default=0.0)
    for rid, by_sentence in by_record.items():
        passage = passages.get(rid)
        for s in range(len(passage.sentences) if passage else 0):
            values = by_sentence.get(s)
            counts[f"{name}_sentences_without_scored_facts"] += not values
            table.add(name, "sentence", rid, s, max(values) if values else neutral, sentence_index=s)
        value = responses[rid]
        counts[f"{name}_responses_without_scored_facts"] += value is None
        table.add_response(name, rid, worst if value is None else value)


def _decision_paths(raw: Mapping[str, Any], knobs: HalluCheckKnobs) -> dict[str, dict[str, int]]:
    """Share of facts by decision path for each tagging and regeneration: no question,
    misaligned, aligned but a uniform step (KS), passed."""
    out: dict[str, dict[str, int]] = {}
    for tagging in raw["taggings"]:
        for key in raw["regenerations"]:
            paths: Counter[str] = Counter()
            for by_tag in raw["records"].values():
                for entry in by_tag.get(tagging, []):
                    if entry.get("question") is None:
                        paths["no_question"] += 1
                        continue
                    misaligned = fact_flag(entry, key, knobs, probability_check=False)
                    if misaligned is None:
                        paths["no_verdict"] += 1
                    elif misaligned:
                        paths["misaligned"] += 1
                    elif fact_flag(entry, key, knobs, probability_check=True):
                        paths["ks_uniform"] += 1
                    else:
                        paths["passed"] += 1
            out[f"{tagging}/{key}"] = dict(paths)
    return out
