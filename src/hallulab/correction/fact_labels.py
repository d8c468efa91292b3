"""Fact labels for the dev reading's fact threshold by fact-level F1 (FactSelfCheck Appendix C).

The paper labels every fact of the response's knowledge graph KG_p as supported or not by
the real Wikipedia biography, with an LLM judge ("LLM-as-judge", 5,488 facts on WikiBio), and
reports the fact threshold of highest fact-level F1 (0.4 for FactSelfCheck), which classifies
the facts of its Table 10 and Figure 6; Table 3's correction flags facts with 0.3, the highest
sentence-level F1 (:mod:`.thresholds`). This project's dev reading chooses its fact threshold
the Appendix C way, on the development passages only: the ``judge`` role reads the reference and one fact
(a triple) and answers yes or no; a fact the reference does not support is the positive class
(hallucinated). A fact is labelled once per passage (a triple in several sentences is one
fact) and carries its FactSelfCheck score, which is one value per triple.

Where the reply is not yes / no (a small judge may ignore the format), the label is read from
the first reply token instead (P(No) > P(Yes), :func:`hallulab.core.token_stats.yes_no_probability`)
when the judge is white-box; a fact with neither reading is left out. Each source is counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hallulab.correction.judge import judge_replies
from hallulab.correction.selection import f1_threshold
from hallulab.data.schema import Record
from hallulab.llm.cached import CachedLLM
from hallulab.llm.prompts import PromptTemplate


@dataclass(frozen=True)
class JudgedFact:
    """One KG_p fact of a development passage: its score and the judge's label."""

    record_id: str
    triple: str
    score: float
    hallucinated: bool


@dataclass(frozen=True)
class FactLabels:
    """The judged development facts and where each label came from."""

    facts: tuple[JudgedFact, ...]
    from_reply: int
    from_first_token: int
    unlabelled: int

    def threshold(self) -> tuple[float, float]:
        """(threshold, F1) of highest fact-level F1 over the labelled facts (NaN, NaN when
        none is hallucinated)."""
        return f1_threshold([f.score for f in self.facts], [f.hallucinated for f in self.facts])

    def counts(self) -> dict[str, int]:
        return {
            "dev_facts_judged": len(self.facts) + self.unlabelled,
            "dev_facts_hallucinated": sum(f.hallucinated for f in self.facts),
            "dev_fact_labels_from_reply": self.from_reply,
            "dev_fact_labels_from_first_token": self.from_first_token,
            "dev_facts_unlabelled": self.unlabelled,
        }


def unique_facts(
    dev: Sequence[Record], facts: Mapping[str, Sequence[tuple[int, str, float]]]
) -> list[tuple[Record, str, float]]:
    """(passage, triple text, score) of every distinct fact of the development passages, in order."""
    out: list[tuple[Record, str, float]] = []
    for record in dev:
        seen: dict[str, float] = {}
        for _, triple, score in facts.get(record.id, []):
            seen[triple] = max(score, seen.get(triple, score))
        out.extend((record, triple, score) for triple, score in seen.items())
    return out


def judge_facts(
    dev: Sequence[Record],
    facts: Mapping[str, Sequence[tuple[int, str, float]]],
    prompt: PromptTemplate,
    judge: CachedLLM,
    top_k: int,
) -> FactLabels:
    """Ask the judge whether the passage's reference supports each distinct development fact."""
    todo = unique_facts([p for p in dev if p.reference], facts)
    answers = judge_replies(
        judge, [prompt.messages(reference=record.reference or "", fact=triple) for record, triple, _ in todo], top_k
    )
    sources: Counter[str] = Counter()
    judged: list[JudgedFact] = []
    for (record, triple, score), answer in zip(todo, answers, strict=True):
        if answer.verdict in ("factual", "non-factual"):
            sources["reply"] += 1
            hallucinated = answer.verdict == "non-factual"
        elif answer.p_no is not None:
            sources["first_token"] += 1
            hallucinated = answer.p_no > 0.5
        else:
            sources["none"] += 1
            continue
        judged.append(JudgedFact(record.id, triple, score, hallucinated))
    return FactLabels(tuple(judged), sources["reply"], sources["first_token"], sources["none"])
