"""Whether a filled cell measures its method or the model that filled the method's LLM role.

A cell is **model-limited** when

* its **flat share**, the share of its units on its single most common score, is at least
  :data:`FLAT_SHARE_BOUND`: the ranking its ROC-AUC, PR-AUC and PRR read is then decided among
  the few units off that score (SelfCheckGPT-Prompt's parsed verdict gives 1.0 to every WikiBio
  sentence when its evaluator replies No to every pair); or
* a check its method declares of an LLM role (:attr:`hallulab.pipeline.spec.MethodSpec.role_checks`,
  counted in the cell's results file) succeeded on less than :data:`ROLE_SUCCESS_BOUND` of the
  role's calls (SelfCheckGPT-MQAG's question generator: most replies not parsed, so most
  sentences keep the score of a sentence without a question); or a role that answers from a
  closed set gave one answer to at least :data:`FLAT_SHARE_BOUND` of its calls (its verdicts
  are as flat as a flat score).

Every other filled cell is ``valid``. The table keeps a model-limited cell's numbers (they are
what the run computed) but never makes it a column's best (:mod:`hallulab.benchmark.table_file`),
and each rendering marks it with its reason in words and counts. The verdict says that the
model could not play the role, not that the method does not work.

**The bounds.** 0.8 for the flat share sits above the larger class's share of every column of
the committed table (a test checks it): a perfect binary detector, 1 on the hallucinated units
and 0 on the others, has a flat share equal to that share, so it is never flagged, while a
score that four units in five share leaves a fifth of them to be ranked. A closed-set role's
most common answer is held to the same bound for the same reason: a sound evaluator answers No
about as often as the units are hallucinated. 0.5 for a role's success: below it the role
failed on more of its calls than it worked, so most units are scored from what the method puts
in place of a failed reply (0.5 for a sentence without a question, a repeated option), not from
what the method reads. Neither bound is near a committed cell's value: the flagged cells sit
at the top of the flat shares or the bottom of the role rates, the valid ones well inside.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hallulab.benchmark.units import CellUnits
from hallulab.pipeline.role_checks import DeclaredCheck, RoleReading

#: a cell whose single most common score holds at least this share of its units is model-limited;
#: so is one whose closed-set role gave one answer to at least this share of its calls
FLAT_SHARE_BOUND = 0.8
#: a cell one of whose declared role checks succeeded on less than this share is model-limited
ROLE_SUCCESS_BOUND = 0.5

VALID = "valid"
MODEL_LIMITED = "model-limited"


def bounds() -> dict[str, float]:
    """The bounds as the table file states them (``protocol.model_limited``)."""
    return {"flat_share_at_least": FLAT_SHARE_BOUND, "role_success_below": ROLE_SUCCESS_BOUND}


@dataclass(frozen=True)
class FlatScore:
    """A cell's single most common score (the first in unit order on a tie), on how many of
    its units, and the units' level."""

    score: float | None
    count: int
    units: int
    level: str

    @property
    def share(self) -> float | None:
        return None if self.units == 0 else self.count / self.units

    @property
    def limited(self) -> bool:
        share = self.share
        return share is not None and share >= FLAT_SHARE_BOUND

    def words(self) -> str:
        """``1.0 on 141 of 150 claims``."""
        if self.score is None:
            return f"no {self.level} scored"
        return f"{_score_text(self.score)} on {self.count:,} of {self.units:,} {self.level}s"


def _score_text(score: float) -> str:
    """A score as the units file holds it, short: ``1.0``, ``0.5``, ``12.0``, ``0.157``."""
    return f"{score:.1f}" if score == round(score, 1) else f"{score:.3g}"


def flat_score(units: CellUnits) -> FlatScore:
    """The most common score of one variant's units."""
    if not len(units.scores):
        return FlatScore(None, 0, 0, units.level)
    score, count = Counter(units.scores.tolist()).most_common(1)[0]
    return FlatScore(float(score), count, len(units.scores), units.level)


def role_limited(reading: RoleReading) -> bool:
    """Whether one role reading makes its cell model-limited (the module docstring's rule)."""
    rate = reading.rate
    if rate is None:
        return False
    if reading.one_answer:
        return (reading.of - reading.succeeded) / reading.of >= FLAT_SHARE_BOUND
    return rate < ROLE_SUCCESS_BOUND


@dataclass(frozen=True)
class CellVerdict:
    """One filled cell's flat score, role readings and what they make of it."""

    flat: FlatScore
    roles: tuple[RoleReading, ...] = ()

    @property
    def limited(self) -> bool:
        return self.flat.limited or any(role_limited(role) for role in self.roles)

    @property
    def verdict(self) -> str:
        return MODEL_LIMITED if self.limited else VALID

    @property
    def reason(self) -> str:
        """In words, with the counts: what makes the cell model-limited, or, for a valid cell,
        its most common score and each role's successes."""
        if self.limited:
            failed = [self.flat.words()] if self.flat.limited else []
            failed += [role.failed for role in self.roles if role_limited(role)]
            return "; ".join(failed)
        return "; ".join([f"most common score {self.flat.words()}", *(role.passed for role in self.roles)])

    def to_dict(self) -> dict[str, Any]:
        share = self.flat.share
        return {
            "flat_share": None if share is None else round(share, 4),
            "flat_score": self.flat.score,
            "roles": [role.to_dict() for role in self.roles],
            "verdict": self.verdict,
            "reason": self.reason,
        }


def cell_verdict(
    units: CellUnits, checks: Sequence[DeclaredCheck], diagnostics: Mapping[str, Any], where: str
) -> CellVerdict:
    """The verdict of one variant's cell: its units' flat score and the checks of its method
    that apply to the variant, read from its results file's ``diagnostics`` (``where`` names
    the file in an error)."""
    readings = tuple(check.read(diagnostics, where) for check in checks if check.applies_to(units.variant))
    return CellVerdict(flat_score(units), readings)
