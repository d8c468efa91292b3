"""The members of a combining method (the ensemble): which method variants it reads.

A combining method's spec names a params key (``MethodSpec.combines``, e.g.
``ensemble.members``) holding a list of ``{method: <registered method>, variant: <its
variant>}``. The DAG gives each member a ``members_<combiner>`` stage (DVC ``foreach`` over
that list) that copies the variant's unit scores at the combined level out of the member's
``aggregate_<method>`` output, so that the combiner's aggregate stage depends on exactly its
members' scores and re-runs when one of them changes. A list (not a mapping) because Hydra
replaces a list on override and merges a mapping.

A member whose method wrote no such variant under the run's settings (a sweep over
``selfcheck_ngram.n`` without 1 has no ``ngram_n1_max``) is absent, not an error: its stage
writes an empty table and warns, and the combiner combines the others and lists the absent
ones in its diagnostics (none present is an error). A variant at the wrong level is an error.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hallulab.core.config import typed
from hallulab.core.errors import UserFacingError
from hallulab.core.levels import LEVELS, MEMBER_PREFIX
from hallulab.pipeline import registry

if TYPE_CHECKING:  # the score tables are read by the combining step, not by the knob class's import
    import pandas as pd

__all__ = [
    "MEMBER_PREFIX",
    "AbsentVariant",
    "Member",
    "MemberError",
    "check_level",
    "member_rows",
    "parse_members",
    "select_member",
]


class MemberError(ValueError, UserFacingError):
    """A member list or a member's scores that the combiner cannot use (one line)."""


class AbsentVariant(MemberError):
    """The member's method wrote no such variant under this run's settings (a sweep over
    ``selfcheck_ngram.n`` leaves out ``ngram_n1_max``): the members stage writes an empty
    table and the combiner says which members it combined."""


@dataclass(frozen=True)
class Member:
    """One variant of one registered method that a combiner reads."""

    method: str
    variant: str

    @property
    def key(self) -> str:
        """``<method>/<variant>``: the member's name in ``ctx.members`` and in diagnostics."""
        return f"{self.method}/{self.variant}"


def parse_members(value: Any, setting: str, combiner: str) -> list[Member]:
    """The member list of the setting ``setting``; every problem is one line naming it."""
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise MemberError(f"{setting} must be a non-empty list of {{method: ..., variant: ...}}, got {value!r}")
    members = [
        item if isinstance(item, Member) else typed(Member, item, f"{setting}[{i}]") for i, item in enumerate(value)
    ]
    known = [name for name in registry.method_names() if name != combiner]
    for index, member in enumerate(members):
        if member.method not in known:
            raise MemberError(
                f"{setting}[{index}].method {member.method!r} is not a registered method; registered: {known}"
            )
        if member in members[:index]:
            raise MemberError(f"{setting}[{index}]: {member.key} is listed twice")
    return members


def check_level(level: str, setting: str) -> str:
    if level not in LEVELS:
        raise MemberError(f"{setting} is {level!r}; expected one of {list(LEVELS)}")
    return level


def select_member(frame: pd.DataFrame, member: Member, level: str, source: str) -> pd.DataFrame:
    """The member's rows at ``level`` out of its method's unit scores (``source`` names the
    file in errors): a variant the method did not write, or one without units at that level,
    is one line listing what the file does hold."""
    variants = list(dict.fromkeys(frame["variant"].tolist()))
    if member.variant not in variants:
        raise AbsentVariant(f"{member.key}: {source} has no variant {member.variant!r}; it has {variants}")
    rows = frame[(frame["variant"] == member.variant) & (frame["level"] == level)]
    if rows.empty:
        levels = sorted(set(frame.loc[frame["variant"] == member.variant, "level"]))
        raise MemberError(f"{member.key}: no {level!r} units in {source}; this variant scores {levels}")
    return rows.reset_index(drop=True)


def member_rows(frame: pd.DataFrame, member: Member, level: str, source: str, log: logging.Logger) -> pd.DataFrame:
    """:func:`select_member`, with a variant absent under the run's settings an empty table
    and a warning (the combiner combines the other members and says so)."""
    try:
        return select_member(frame, member, level, source)
    except AbsentVariant as absent:
        from hallulab.core.units import score_frame

        log.warning("%s; the combiner combines the other members", absent)
        return score_frame()
