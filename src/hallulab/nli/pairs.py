"""The records the NLI readers produce: labelled premise-hypothesis pairs, and FEVER claims
with their gold evidence (Thorne et al., 2018) before they become pairs."""

from __future__ import annotations

from dataclasses import dataclass

LABELS = ("entailment", "neutral", "contradiction")
#: FEVER's verdict -> the NLI label of a premise that holds the claim's evidence
EVIDENCE_LABELS = {"SUPPORTS": "entailment", "REFUTES": "contradiction"}


@dataclass(frozen=True)
class NLIPair:
    premise: str
    hypothesis: str
    label: str
    source: str


@dataclass(frozen=True)
class FeverClaim:
    """One FEVER claim with a verdict (SUPPORTS / REFUTES) and its gold evidence sentences
    (detokenised: the union of every gold evidence set)."""

    claim: str
    verdict: str
    evidence: tuple[str, ...]
