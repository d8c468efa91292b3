"""FactSelfCheck's fact and sentence scores (Eq. 7-11) on stored graphs and answers (pure)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from hallulab.artifacts.knowledge_graphs import Triple

_WORDS = re.compile(r"[a-z]+")
NO_FACT_SENTENCE_SCORE = 0.5


def psi(reply: str) -> float | None:
    """Eq. 9 as the released code reads a reply: its words searched for "yes" (0), then "no"
    (1); None when neither occurs (an invalid answer, left out of the mean)."""
    words = set(_WORDS.findall(reply.lower()))
    if "yes" in words:
        return 0.0
    if "no" in words:
        return 1.0
    return None


def frequency_score(fact: Triple, sample_kgs: Sequence[Sequence[Triple]]) -> float:
    """Eq. 7: 1 - the share of sample graphs that contain the fact exactly."""
    if not sample_kgs:
        raise ValueError("the KG-frequency score needs at least one sample")
    return 1.0 - sum(fact in set(kg) for kg in sample_kgs) / len(sample_kgs)


def llm_score(answers: Sequence[float | None]) -> float | None:
    """Eq. 8 / 10: the mean of the valid answers; None when no answer is valid."""
    valid = [a for a in answers if a is not None]
    return float(np.mean(valid)) if valid else None


def defined_scores(triples: Sequence[Triple], by_fact: Mapping[Triple, float | None]) -> list[float]:
    """The defined scores of a unit's triples (a sentence's or a given claim's): Eq. 11's inputs."""
    return [float(v) for v in (by_fact[t] for t in triples) if v is not None]


def sentence_score(fact_scores: Sequence[float], aggregation: str) -> float:
    """Eq. 11 (max or mean over the sentence's facts); 0.5 for a sentence without facts."""
    if not fact_scores:
        return NO_FACT_SENTENCE_SCORE
    return float(np.max(fact_scores) if aggregation == "max" else np.mean(fact_scores))


def graph_text(triples: Sequence[Triple]) -> str:
    """A knowledge graph as the prompt shows it; "(empty)" for a sample without triples."""
    return "; ".join(t.text() for t in triples) if triples else "(empty)"
