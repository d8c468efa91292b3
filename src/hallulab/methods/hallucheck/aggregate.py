"""HalluCheck, cheap step: fact flags from the stored regenerations (alignment measure and
threshold, KS level and steps are knobs), response score = share of hallucinated facts.

The headline variant computes the checks as the released code does
(:mod:`hallulab.methods.hallucheck.checks`): the answer span read out of the original response
against the answer span read out of the regenerated answer (span against span,
:mod:`hallulab.methods.hallucheck.spans`), aligned when the judge says they refer to the same
thing (``alignment: judge``, the released LLM judge, one prompt per response:
:mod:`hallulab.methods.hallucheck.judge`), then the KS test against scipy's U[min, min + max] on
the first 50 steps: the regenerated span's steps and the step before. Each decoding
(``greedy``, ``beam``, ``sampled``: :mod:`hallulab.methods.hallucheck.score`) gets every
reading. Labelled variants, each changing one thing:

* ``_align``: alignment only, no probability check (Table 2's "Fact alignment" row);
* ``_f1`` / ``_align_f1``: alignment by whitespace-token F1 >= 0.6 of the two spans instead of
  the judge (the released ``calculate_f1_score``, whose call the released code leaves commented
  out; the reading that needs no reply format);
* ``_factwindow`` / ``_align_factwindow``: this project's earlier reading: the fact itself
  against the regenerated answer's word window that best matches it (close to containment),
  by token F1, the KS test on that window's steps;
* ``_ksminmax``: the KS test against U[min, max] as §3 describes it, on the span's own steps
  (a span beyond the tested steps flagged);
* ``_squadf1`` / ``_align_squadf1``: alignment by token F1 after SQuAD normalisation;
* ``_allsteps``: the KS test on every tested step;
* ``_wholereply`` / ``_align_wholereply``: no span: the fact against the whole answer by token
  F1, KS on every step.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from hallulab.core.config import ConfigError
from hallulab.core.units import DetailTable, ScoreTable
from hallulab.methods.hallucheck.checks import (
    KS_MINMAX,
    KS_RELEASED,
    alignment_f1,
    contained,
    guessed,
    locate_answer,
    span_check_steps,
)
from hallulab.methods.hallucheck.details import fact_details
from hallulab.methods.hallucheck.knobs import HalluCheckKnobs
from hallulab.methods.hallucheck.raw import CheckedFact, HalluCheckScores, RegeneratedAnswer
from hallulab.pipeline.context import AggregateContext, Aggregated
from hallulab.pipeline.controls import AggregateControls

NO_FACT_SENTENCE_SCORE = 0.5


#: what alignment compares: the two read spans (released) | the fact and the answer's
#: best-matching window | the fact and the whole answer
ANSWER_READINGS = ("spans", "factwindow", "reply")


@dataclass(frozen=True)
class CheckMode:
    """Which texts alignment compares and how (§3; the released code: the two read answer
    spans, judged by an LLM), whether the KS test runs, which steps it reads and against which
    reference."""

    suffix: str  # appended to the variant name
    probability_check: bool
    #: None: the knob ``alignment`` (the headline's, the released judge); else one of ALIGNMENTS
    alignment: str | None = None
    answer: str = "spans"  # ANSWER_READINGS
    ks_steps: str = "span"  # "span": the answer span's steps; "all": every tested step
    ks_reference: str = KS_RELEASED  # released: U[min, min + max] | minmax: U[min, max]
    span_rule: str = "released"  # released: the step before the span too | own: the span's steps only
    f1_tokens: str = "split"  # split: whitespace tokens as they are (released) | squad: normalised


#: the released checks: the original response's answer span against the regenerated answer's,
#: aligned by the judge (the knob ``alignment``), then the KS test against scipy's
#: U[min, min + max] on the regenerated span's steps and the step before
RELEASED = CheckMode("", probability_check=True)
#: the released checks with token F1 for the judge: the reading that needs no reply format
TOKEN_F1 = replace(RELEASED, suffix="_f1", alignment="f1")

#: the released checks first, then each labelled reading: the released checks with the named
#: settings changed (a reading that does not compare the two spans aligns by token F1: the
#: judge was asked about the spans only)
CHECK_MODES = (
    RELEASED,
    replace(RELEASED, suffix="_align", probability_check=False),
    TOKEN_F1,
    replace(TOKEN_F1, suffix="_align_f1", probability_check=False),
    replace(TOKEN_F1, suffix="_factwindow", answer="factwindow"),
    replace(TOKEN_F1, suffix="_align_factwindow", probability_check=False, answer="factwindow"),
    replace(RELEASED, suffix="_ksminmax", ks_reference=KS_MINMAX, span_rule="own"),
    replace(TOKEN_F1, suffix="_squadf1", f1_tokens="squad"),
    replace(TOKEN_F1, suffix="_align_squadf1", probability_check=False, f1_tokens="squad"),
    replace(RELEASED, suffix="_allsteps", ks_steps="all"),
    replace(TOKEN_F1, suffix="_wholereply", answer="reply", ks_steps="all"),
    replace(TOKEN_F1, suffix="_align_wholereply", probability_check=False, answer="reply", ks_steps="all"),
)


@dataclass(frozen=True)
class Compared:
    """What one reading aligns: the reference (the original response's span, or the fact), the
    regenerated text, and the regenerated span's characters in the reply as generated (None:
    no span, so the KS test reads every tested step)."""

    reference: str
    answer: str
    span: tuple[int, int] | None


def compared_texts(entry: CheckedFact, answer: RegeneratedAnswer, reading: str) -> Compared | None:
    """The texts ``reading`` aligns (:data:`ANSWER_READINGS`); None when the spans were not read
    (raw scores of an older score step)."""
    if reading == "spans":
        if "original_span" not in entry or "span" not in answer:
            return None
        original, read = entry["original_span"], answer["span"]
        where = (read["start"], read["end"]) if read else None
        return Compared(original["text"] if original else "", read["text"] if read else "", where)
    if reading == "factwindow":
        located = locate_answer(answer.get("steps"), answer["text"], entry["text"])
        return Compared(entry["text"], located.span_text, located.span)
    return Compared(entry["text"], answer["text"], None)


def fact_flag(
    entry: CheckedFact,
    key: str,
    knobs: HalluCheckKnobs,
    mode: CheckMode = CHECK_MODES[0],
    counts: Counter[str] | None = None,
) -> bool | None:
    """True = hallucinated, None = not checkable (no question, no read spans, or no judge verdict)."""
    if entry.get("question") is None:
        return None
    answer = entry["answers"][key]
    steps: list[str] | None = answer.get("steps")
    compared = compared_texts(entry, answer, mode.answer)
    if compared is None:
        if counts is not None:
            counts["spans_not_read_unchecked"] += 1
        return None
    alignment = mode.alignment or knobs.alignment
    if alignment == "f1":
        aligned = alignment_f1(compared.answer, compared.reference, mode.f1_tokens) >= knobs.f1_threshold
    elif alignment == "containment":
        aligned = contained(compared.reference, compared.answer)
    else:  # the judge's verdict on the two spans (the score step asked it)
        verdict = (entry.get("judge") or {}).get(key)
        if verdict is None:
            if counts is not None:
                counts["judge_no_verdict_unchecked"] += 1
            return None
        aligned = verdict
    if not aligned:
        return True
    if not mode.probability_check:
        return False
    tops = answer["top"]
    span = compared.span
    if mode.ks_steps == "all" or span is None or steps is None:
        if mode.ks_steps == "span" and counts is not None:
            counts["ks_span_not_located_all_steps_tested"] += 1
        return guessed(tops, knobs.ks_alpha, knobs.ks_steps, mode.ks_reference)
    tested = span_check_steps(steps, span, min(knobs.ks_steps, len(tops)), mode.span_rule)
    if tested.verdict is not None:
        if counts is not None:
            counts[f"ks_span_{tested.outcome}"] += 1
        return tested.verdict
    return guessed([tops[i] for i in tested.indices], knobs.ks_alpha, knobs.ks_steps, mode.ks_reference)


def variant_name(tagging: str, key: str, mode: CheckMode = CHECK_MODES[0]) -> str:
    role, decoding = key.split("/")
    name = f"hallucheck_{tagging}_{decoding}"
    if role == "verifier":
        name += "_crosseval"
    return name + mode.suffix


def require_verdicts(raw: HalluCheckScores, knobs: HalluCheckKnobs) -> None:
    """The judge's alignment reads the verdicts the score step stored: a one-line error when a
    fact has a question and no verdicts (the score step ran with ``judge: false``)."""
    if knobs.alignment != "judge":
        return
    for rid, by_tagging in raw.records.items():
        for tagging, entries in by_tagging.items():
            for entry in entries:
                if entry.get("question") is not None and "judge" not in entry:
                    raise ConfigError(
                        f"hallucheck raw scores, record {rid!r} ({tagging} fact {entry['index']}): field 'judge' "
                        "is missing, which hallucheck.aggregate.alignment=judge reads; run the score step with "
                        "hallucheck.score.judge=true, or set hallucheck.aggregate.alignment=f1"
                    )


def aggregate(ctx: AggregateContext[HalluCheckScores]) -> Aggregated:
    knobs = ctx.params.typed(HalluCheckKnobs, "hallucheck.aggregate")
    raw = ctx.raw
    require_verdicts(raw, knobs)
    records = {p.id: p for p in ctx.records}
    table = ScoreTable()
    counts: Counter[str] = Counter()
    #: (tagging, regeneration, mode suffix, record, fact index) -> the flag, for the modes the
    #: decision paths read (the headline, the token-F1 reading and their alignment-only readings)
    path_flags: dict[tuple[str, str, str, str, int], bool | None] = {}
    details = DetailTable()
    #: (tagging, record, fact index) -> the fact's details, computed once for all its variants
    fact_rows: dict[tuple[str, str, int], list[tuple[str, str]]] = {}
    for tagging in raw.taggings:
        for key in raw.regenerations:
            for mode in CHECK_MODES:
                name = variant_name(tagging, key, mode)
                for rid, by_tag in raw.records.items():
                    entries = by_tag.get(tagging, [])
                    flags: list[bool] = []
                    by_sentence: dict[int, list[float]] = {}
                    for entry in entries:
                        flag = fact_flag(entry, key, knobs, mode, counts if not mode.suffix else None)
                        if mode in PATH_MODES:
                            path_flags[(tagging, key, mode.suffix, rid, entry["index"])] = flag
                        if flag is None:
                            counts[f"{name}_facts_unchecked"] += 1
                            continue
                        flags.append(flag)
                        counts[f"{name}_facts_{'hallucinated' if flag else 'passed'}"] += 1
                        table.add(
                            name, "fact", rid, entry["index"], float(flag), sentence_index=entry["sentence_index"]
                        )
                        fact_key = (tagging, rid, entry["index"])
                        if fact_key not in fact_rows:
                            fact_rows[fact_key] = fact_details(
                                entry, knobs.f1_threshold, knobs.ks_alpha, knobs.ks_steps
                            )
                        details.add(name, "fact", rid, entry["index"], fact_rows[fact_key])
                        by_sentence.setdefault(entry["sentence_index"], []).append(float(flag))
                    record = records.get(rid)
                    for s in range(len(record.sentences) if record else 0):
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
    for tagging in raw.taggings:
        _fact_nll_variant(tagging, raw, records, table, counts)
    diagnostics: dict[str, Any] = {
        **raw.diagnostics,
        **dict(counts),
        **{name: _decision_paths(raw, path_flags, modes) for name, modes in DECISION_PATHS.items()},
        "llms": raw.llms,
    }
    present = set(table.frame()["variant"])
    headline = tuple(
        n
        for n in (
            "hallucheck_ner_beam",  # the released call (a model whose own settings do not sample)
            "hallucheck_ner_sampled",  # the released call (a model whose own settings sample)
            "hallucheck_ner_greedy",  # the paper's Greedy row: no released code path
            "hallucheck_ner_greedy_align",
            "hallucheck_ner_greedy_f1",  # token F1 for the judge: no reply format to follow
            "hallucheck_ner_greedy_crosseval",
            "hallucheck_ner_factnll",
        )
        if n in present
    )
    return Aggregated(table.frame(), diagnostics, AggregateControls(headline_variants=headline), details.frame())


def fact_nll(logprobs: Sequence[float]) -> float | None:
    """The mean negative log-probability of a fact's tokens given its question; None without tokens."""
    return float(-np.mean(logprobs)) if len(logprobs) else None


def _fact_nll_variant(
    tagging: str,
    raw: HalluCheckScores,
    records: Mapping[str, Any],
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
    checked = raw.records
    if not any("fact_logprobs" in e for by_tag in checked.values() for e in by_tag.get(tagging, [])):
        return  # the score step stored no fact probabilities (a black-box generator, or switched off)
    by_record: dict[str, dict[int, list[float]]] = {}
    for rid, by_tag in checked.items():
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
        record = records.get(rid)
        for s in range(len(record.sentences) if record else 0):
            values = by_sentence.get(s)
            counts[f"{name}_sentences_without_scored_facts"] += not values
            table.add(name, "sentence", rid, s, max(values) if values else neutral, sentence_index=s)
        value = responses[rid]
        counts[f"{name}_responses_without_scored_facts"] += value is None
        table.add_response(name, rid, worst if value is None else value)


def _mode(suffix: str) -> CheckMode:
    return next(m for m in CHECK_MODES if m.suffix == suffix)


#: the diagnostics key of each set of decision paths and the two modes whose flags make it (a
#: reading with the KS check, and its alignment-only reading): the headline's (the judge) and
#: the token-F1 reading's
DECISION_PATHS = {
    "decision_paths": (RELEASED, _mode("_align")),
    "decision_paths_f1": (TOKEN_F1, _mode("_align_f1")),
}
PATH_MODES = tuple(mode for modes in DECISION_PATHS.values() for mode in modes)
#: the paths a fact takes (:func:`_decision_paths`)
DECISIONS = ("no_question", "no_verdict", "misaligned", "ks_uniform", "passed")


def _decision_paths(
    raw: HalluCheckScores,
    flags: Mapping[tuple[str, str, str, str, int], bool | None],
    modes: tuple[CheckMode, CheckMode],
) -> dict[str, dict[str, int]]:
    """Share of facts by decision path for each tagging and regeneration: no question,
    misaligned, aligned but a uniform step (KS), passed (no verdict: the judge's reply was not
    read); read from the flags the main loop computed (``flags``, keyed as there) for ``modes``
    (the reading with the KS check, its alignment-only reading)."""
    headline, alignment_only = (mode.suffix for mode in modes)
    out: dict[str, dict[str, int]] = {}
    for tagging in raw.taggings:
        for key in raw.regenerations:
            paths: Counter[str] = Counter(dict.fromkeys(DECISIONS, 0))  # every path written, 0 included
            for rid, by_tag in raw.records.items():
                for entry in by_tag.get(tagging, []):
                    if entry.get("question") is None:
                        paths["no_question"] += 1
                        continue
                    misaligned = flags[(tagging, key, alignment_only, rid, entry["index"])]
                    if misaligned is None:
                        paths["no_verdict"] += 1
                    elif misaligned:
                        paths["misaligned"] += 1
                    elif flags[(tagging, key, headline, rid, entry["index"])]:
                        paths["ks_uniform"] += 1
                    else:
                        paths["passed"] += 1
            out[f"{tagging}/{key}"] = dict(paths)
    return out
