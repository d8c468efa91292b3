"""The flagging thresholds of the correction, in two readings (FactSelfCheck §4.5, Table 3).

A sentence is flagged when its sentence-level score reaches the sentence threshold t_s; a fact
when its FactSelfCheck score reaches the fact threshold t_f. Each threshold is the one of
highest F1 = 2PR / (P + R) over the candidate scores (:func:`.selection.f1_threshold`), a
sentence labelled hallucinated (label > 0.499, major- or minor-inaccurate) the positive class.

**released** (Table 3's rule; :func:`released_thresholds`): §4.5 flags with "thresholds that
achieved the highest F1-scores on the dataset" (0.3 for FactSelfCheck-Text, 0.75 for
SelfCheckGPT-Prompt), and FactSelfCheck's released ``scripts/correction/correct.py``
(``get_thresholds``) picks both on the evaluated passages' own sentence labels. t_f is chosen
at the sentence level: a sentence's score is the mean of its facts' scores,
s(r_i) = (1 / |KG_i|) sum_{f in KG_i} s(f), and a sentence without facts is left out of the
curve (its aggregate is None there); t_f then flags single facts. Of equal F1 the lower
threshold is taken (``np.argmax`` over the increasing thresholds). hallulab chooses on every
labelled passage of the data set, the corrected ones among them, as the released code does.

**dev** (this project's; :func:`thresholds`): both are chosen on a development split the
corrected passages are not in. t_f by ``correction.fact_threshold_labels``: ``judge``, the
highest fact-level F1 over the development facts labelled by the ``judge`` role
(:mod:`.fact_labels`; the fact-level evaluation of the paper's Appendix C, whose 0.4 classifies
the facts of Table 10 and Figure 6, not Table 3's), or ``sentence``, Table 3's sentence-level
rule above on the development labels. Of equal F1 the higher threshold is taken (fewer flags).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from hallulab.core.units import sentence_scores
from hallulab.correction.fact_labels import FactLabels
from hallulab.correction.selection import f1_threshold
from hallulab.data.schema import Record

#: a sentence label above this is hallucinated (WikiBio: major- and minor-inaccurate, 1.0 and 0.5)
POSITIVE_ABOVE = 0.499

#: record -> (sentence index, triple text, score) of every scored fact occurrence
Facts = Mapping[str, Sequence[tuple[int, str, float]]]


def sentence_rows(
    records: Sequence[Record], by_record: Mapping[str, Sequence[float]]
) -> tuple[list[float], list[bool]]:
    """(score, hallucinated) of every labelled sentence the sentence detector scored."""
    scores: list[float] = []
    positive: list[bool] = []
    for record in records:
        if record.labels is None or record.id not in by_record:
            continue
        for index, label in enumerate(record.labels):
            scores.append(float(by_record[record.id][index]))
            positive.append(label > POSITIVE_ABOVE)
    return scores, positive


def mean_fact_rows(records: Sequence[Record], facts: Facts) -> tuple[list[float], list[bool], int]:
    """(mean fact score, hallucinated) of every labelled sentence that holds a fact, and how many
    labelled sentences hold none (left out, as the released code drops their None score)."""
    scores: list[float] = []
    positive: list[bool] = []
    without = 0
    for record in records:
        if record.labels is None:
            continue
        by_sentence: dict[int, list[float]] = {}
        for index, _, score in facts.get(record.id, []):
            by_sentence.setdefault(index, []).append(score)
        for index, label in enumerate(record.labels):
            values = by_sentence.get(index)
            if not values:
                without += 1
                continue
            scores.append(float(np.mean(values)))
            positive.append(label > POSITIVE_ABOVE)
    return scores, positive, without


def _or_none(value: float) -> float | None:
    return None if value != value else value  # NaN: nothing to choose on


def thresholds(
    dev: Sequence[Record],
    sentence_frame: pd.DataFrame,
    sentence_variant: str,
    facts: Facts,
    fact_labels: FactLabels | None = None,
) -> dict[str, float | None]:
    """This project's reading: F1-maximising thresholds on the development passages; None where
    the split has no positive label (nothing is then flagged). The fact threshold reads
    ``fact_labels`` (judge-labelled facts, fact-level F1) when given, else Table 3's
    sentence-level rule (mean over a sentence's facts) on the development labels."""
    sentence_t, sentence_f1 = f1_threshold(*sentence_rows(dev, sentence_scores(sentence_frame, sentence_variant)))
    if fact_labels is not None:
        fact_t, fact_f1 = fact_labels.threshold()
    else:
        scores, positive, _ = mean_fact_rows(dev, facts)
        fact_t, fact_f1 = f1_threshold(scores, positive)
    chosen = {"sentence": sentence_t, "sentence_dev_f1": sentence_f1, "fact": fact_t, "fact_dev_f1": fact_f1}
    return {key: _or_none(value) for key, value in chosen.items()}


def released_thresholds(
    records: Sequence[Record], sentence_frame: pd.DataFrame, sentence_variant: str, facts: Facts
) -> dict[str, Any]:
    """Table 3's reading, as the released ``get_thresholds`` chooses: both thresholds by
    sentence-level F1 on every labelled passage given (the evaluated ones among them), the fact
    threshold over mean-aggregated sentence scores, ties to the lower threshold."""
    labelled = [p for p in records if p.labels is not None]
    sentence_t, sentence_f1 = f1_threshold(
        *sentence_rows(labelled, sentence_scores(sentence_frame, sentence_variant)), ties="lower"
    )
    scores, positive, without = mean_fact_rows(labelled, facts)
    fact_t, fact_f1 = f1_threshold(scores, positive, ties="lower")
    return {
        "sentence": _or_none(sentence_t),
        "sentence_f1": _or_none(sentence_f1),
        "fact": _or_none(fact_t),
        "fact_f1": _or_none(fact_f1),
        "passages": len(labelled),
        "sentences_without_facts": without,
    }
