"""HalluCheck, cheap step: fact flags from the stored regenerations (alignment measure and
threshold, KS level and steps are knobs), response score = share of hallucinated facts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
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
    decision_paths = _decision_paths(raw, knobs)
    diagnostics: dict[str, Any] = {
        **raw.get("diagnostics", {}),
        **dict(counts),
        "decision_paths": decision_paths,
        "llms": raw.get("llms", {}),
        "headline_variants": [
            n
            for n in ("hallucheck_ner_greedy", "hallucheck_ner_greedy_align", "hallucheck_ner_greedy_crosseval")
            if n in set(table.frame()["variant"])
        ],
    }
    return Aggregated(table.frame(), diagnostics)


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
