"""What CCP's score step stores (:class:`hallulab.methods.raw_scores.RawScores`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from hallulab.methods.raw_scores import CountsAndSkipped, JSONValue, RawScores


class CCPClaim(TypedDict):
    """One claim of a record (:func:`hallulab.methods.ccp.score.nli_requests`): ``units``: per
    unit kind (``word``, ``token``), each unit's token indices, its head first; ``classes``: per
    NLI context, per unit kind, one string per unit holding the forward and backward NLI class
    (:data:`hallulab.methods.ccp.formula.ENTAIL` ...) of each alternative in top-K order. An
    unaligned claim has neither filled."""

    index: int
    units: dict[str, list[list[int]]]
    classes: dict[str, dict[str, list[str]]]


class CCPPTrue(TypedDict, total=False):
    """The proxy's P(True): ``llm``, the catalogue entry asked; ``values``: record -> per claim
    (in claim order). Both absent in a file stored without it (the field's default)."""

    llm: str
    values: dict[str, list[float | None]]


@dataclass
class CCPScores(RawScores):
    """``k_max``: K_max of the stored alternatives; ``contexts``: the NLI contexts scored;
    ``nli``: the NLI model's identity (its name and :attr:`hallulab.nli.scorer.NLIScorer.identity`,
    an open record whose keys follow the NLI settings); ``records``: per record, per claim, the
    NLI class of every (word, alternative) pair per context and unit; ``ptrue``: the proxy's
    P(True) per claim; ``diagnostics``: counts."""

    k_max: int
    contexts: list[str]
    nli: dict[str, JSONValue]
    records: dict[str, list[CCPClaim]]
    ptrue: CCPPTrue = field(default_factory=CCPPTrue)
    diagnostics: CountsAndSkipped = field(default_factory=dict)
