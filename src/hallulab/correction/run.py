"""Correction of the test passages at three levels under two threshold readings, and the
judge's labels (see the package docstring)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from hallulab.artifacts.knowledge_graphs import RecordGraphs
from hallulab.core.config import ConfigError
from hallulab.core.units import level_rows, sentence_scores
from hallulab.correction.fact_labels import judge_facts
from hallulab.correction.judge import judge_replies
from hallulab.correction.knobs import CorrectionKnobs
from hallulab.correction.parsing import VERDICTS, parse_numbered
from hallulab.correction.selection import in_dev_split
from hallulab.correction.thresholds import released_thresholds, thresholds
from hallulab.data.schema import Record
from hallulab.llm.base import DecodingParams
from hallulab.llm.cached import CachedLLM
from hallulab.llm.prompts import PromptTemplate

LEVELS = ("baseline", "sentence", "fact")
#: the threshold readings (:mod:`.thresholds`): Table 3's, as the released code chooses them on
#: the data set's labels, and this project's, chosen on the development split
READINGS = ("released", "dev")
#: Table 3's rows: the baseline (no flags: one per passage, whatever the reading), then each
#: flagging level under each reading, ``<level>_<reading>``
ROWS = ("baseline", *(f"{level}_{reading}" for reading in READINGS for level in LEVELS[1:]))


@dataclass
class Correction:
    record_id: str
    level: str
    flagged: list[str]
    sentences: list[str]
    verdicts: list[str | None] = field(default_factory=list)
    #: the judge's P(No) / (P(Yes) + P(No)) of the first reply token per sentence (a white-box
    #: judge; None where neither word is among its top-K), the reading that needs no reply format
    p_no: list[float | None] = field(default_factory=list)
    #: the threshold reading the flags follow (:data:`READINGS`); "" for the baseline
    reading: str = ""

    @property
    def row(self) -> str:
        """Its row of Table 3 (:data:`ROWS`)."""
        return f"{self.level}_{self.reading}" if self.reading else self.level


def _fact_rows(
    frame: pd.DataFrame, variant: str, graphs: Mapping[str, RecordGraphs]
) -> dict[str, list[tuple[int, str, float]]]:
    """record -> (sentence index, triple text, score) of every scored fact occurrence."""
    rows = level_rows(frame, variant, "fact")
    out: dict[str, list[tuple[int, str, float]]] = {}
    for rid, group in rows.groupby("record_id", sort=False):
        record = graphs[str(rid)]
        occurrences = [(s, t) for s, kg in enumerate(record.sentence_kgs) for t in kg]
        for index, score in zip(group["unit_index"], group["score"], strict=True):
            sentence_index, triple = occurrences[int(index)]
            out.setdefault(str(rid), []).append((sentence_index, triple.text(), float(score)))
    return out


def require_variant(setting_name: str, variant: str, frame: pd.DataFrame, level: str) -> None:
    """A named variant must score units of ``level`` in the frame it is read from: a typo would
    otherwise flag nothing and make the level's correction equal the baseline, silently."""
    available = sorted(set(frame.loc[frame["level"] == level, "variant"]))
    if variant not in available:
        raise ConfigError(f"{setting_name}: {variant!r} scores no {level} here; available: {available}")


def correct(
    records: Sequence[Record],
    sentence_frame: pd.DataFrame,
    fact_frame: pd.DataFrame,
    graphs: Mapping[str, RecordGraphs],
    cfg: CorrectionKnobs,
    prompts: Mapping[str, PromptTemplate],
    corrector: CachedLLM,
    judge: CachedLLM,
) -> tuple[list[Correction], dict[str, Any]]:
    """Choose thresholds under both readings (:mod:`.thresholds`), correct the test passages at
    every level under each, judge every sentence."""
    labelled = [p for p in records if p.response is not None and p.labels is not None and p.reference]
    dev = [p for p in labelled if in_dev_split(p.id, cfg.dev_fraction, cfg.seed)]
    test = [p for p in labelled if not in_dev_split(p.id, cfg.dev_fraction, cfg.seed)]
    if cfg.max_records is not None:
        test = test[: cfg.max_records]
    require_variant("correction.sentence_variant", cfg.sentence_variant, sentence_frame, "sentence")
    require_variant("correction.fact_variant", cfg.fact_variant, fact_frame, "fact")
    facts = _fact_rows(fact_frame, cfg.fact_variant, graphs)
    fact_labels = (
        judge_facts(dev, facts, prompts["fact_judge"], judge, cfg.judge_top_k)
        if cfg.fact_threshold_labels == "judge"
        else None
    )
    chosen = thresholds(dev, sentence_frame, cfg.sentence_variant, facts, fact_labels)
    evaluated = [p for p in records if p.response is not None and p.labels is not None]
    released = released_thresholds(evaluated, sentence_frame, cfg.sentence_variant, facts)
    by_record = sentence_scores(sentence_frame, cfg.sentence_variant)
    counts: Counter[str] = Counter()
    if chosen["sentence"] is None:
        counts["no_dev_threshold"] = 1  # the dev rows flag nothing: they equal the baseline's input
    jobs: list[Correction] = []
    for record in test:
        jobs.append(Correction(record.id, "baseline", [], list(record.sentences)))
        for reading, chosen_here in (("released", released), ("dev", chosen)):
            sentence_t = math.inf if chosen_here["sentence"] is None else chosen_here["sentence"]
            fact_t = math.inf if chosen_here["fact"] is None else chosen_here["fact"]
            flagged_sentences = [
                s for s, v in zip(record.sentences, by_record.get(record.id, []), strict=False) if v >= sentence_t
            ]
            flagged_facts = list(dict.fromkeys(t for _, t, v in facts.get(record.id, []) if v >= fact_t))
            for level, flagged in (("sentence", flagged_sentences), ("fact", flagged_facts)):
                jobs.append(Correction(record.id, level, flagged, list(record.sentences), reading=reading))
    by_id = {p.id: p for p in test}
    params = DecodingParams(max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature)
    messages = [
        prompts[job.level].messages(
            prompt=by_id[job.record_id].prompt or "(not known)",
            response="\n".join(f"{i}. {s}" for i, s in enumerate(by_id[job.record_id].sentences, start=1)),
            flagged="\n".join(f"- {x}" for x in job.flagged) or "(none)",
        )
        for job in jobs
    ]
    replies = corrector.generate(messages, params, [cfg.seed] * len(messages)) if messages else []
    for job, reply in zip(jobs, replies, strict=True):
        parsed = parse_numbered(reply.text, len(job.sentences))
        if parsed is None:
            counts[f"{job.row}_corrections_malformed"] += 1
        else:
            job.sentences = parsed
    judged = [(job, i, s) for job in jobs for i, s in enumerate(job.sentences)]
    verdicts = judge_replies(
        judge,
        [prompts["judge"].messages(reference=by_id[j.record_id].reference or "", sentence=s) for j, _, s in judged],
        cfg.judge_top_k,
    )
    for job in jobs:
        job.verdicts = [None] * len(job.sentences)
        job.p_no = [None] * len(job.sentences)
    for (job, index, _), answer in zip(judged, verdicts, strict=True):
        counts["verdicts_unparseable"] += answer.verdict is None
        job.verdicts[index] = answer.verdict
        if answer.white_box:
            job.p_no[index] = answer.p_no
            counts["p_no_missing"] += answer.p_no is None
    return jobs, {
        "released_thresholds": released,
        "thresholds": chosen,
        "fact_threshold_labels": cfg.fact_threshold_labels,
        **(fact_labels.counts() if fact_labels is not None else {}),
        "dev_passages": len(dev),
        "test_passages": len(test),
        **dict(counts),
    }


def format_free_verdict(p_no: float | None) -> str | None:
    """The judge's verdict read from its first token: non-factual when P(No) outweighs P(Yes)."""
    if p_no is None:
        return None
    return "non-factual" if p_no > 0.5 else "factual"


def table3(jobs: Sequence[Correction]) -> dict[str, dict[str, float | None]]:
    """Share of each verdict per row (:data:`ROWS`) and its relative change to the baseline (percent)."""
    return _shares_table({row: [v for job in jobs if job.row == row for v in job.verdicts] for row in ROWS})


def table3_p_no(jobs: Sequence[Correction]) -> dict[str, dict[str, float | None]]:
    """Table 3 from the judge's P(No) reading (:func:`format_free_verdict`): factual and
    non-factual only, since "refused" has no first-token reading; this project's addition for a
    judge that does not follow the yes / no / refused format."""
    verdicts = {row: [format_free_verdict(p) for job in jobs if job.row == row for p in job.p_no] for row in ROWS}
    return _shares_table(verdicts, VERDICTS[:2])


def _shares_table(
    by_row: Mapping[str, Sequence[str | None]], kinds: Sequence[str] = VERDICTS
) -> dict[str, dict[str, float | None]]:
    shares: dict[str, dict[str, float]] = {}
    for row in ROWS:
        verdicts = [v for v in by_row[row] if v is not None]
        total = len(verdicts)
        shares[row] = {v: (verdicts.count(v) / total if total else float("nan")) for v in kinds}
    out: dict[str, dict[str, float | None]] = {}
    for row in ROWS:
        cells: dict[str, float | None] = {}
        for verdict in kinds:
            value = shares[row][verdict]
            cells[verdict] = None if value != value else round(value, 4)
            base = shares["baseline"][verdict]
            change = (value - base) / base * 100 if base and base == base and value == value else None
            cells[f"{verdict}_change_percent"] = None if change is None or row == "baseline" else round(change, 1)
        out[row] = cells
    return out
