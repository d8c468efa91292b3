"""Records a method leaves out, each with its reason, reported the same way by every method.

A method scores the records that carry what it reads (a response, samples, a knowledge graph,
token statistics ...) and leaves the others out. A short score table must never be a silent
loss: the step that leaves records out logs one warning line naming them, and the method's
diagnostics say ``skipped_records`` (how many) and ``skipped_record_ids`` (which, sorted; an
empty list when none) through :func:`skip_diagnostics`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from hallulab.data.schema import Record

#: Record ids named per reason in the warning line; the diagnostics list them all.
LOGGED_IDS = 10


@dataclass(frozen=True)
class Skipped:
    """A record left out, and why (a few words: "no samples")."""

    record_id: str
    reason: str


@dataclass(frozen=True)
class Requirement:
    """What a method needs of a record: a record for which ``holds`` is false is left out,
    with ``reason``."""

    reason: str
    holds: Callable[[Record], bool]


HAS_RESPONSE = Requirement("no response", lambda p: p.response is not None)
HAS_SAMPLES = Requirement("no samples", lambda p: bool(p.samples))
HAS_PROMPT = Requirement("no prompt", lambda p: bool(p.prompt))


def present_in(records: Iterable[str], reason: str) -> Requirement:
    """A record must have an entry in an artifact (its knowledge graph, its token statistics)."""
    ids = frozenset(records)
    return Requirement(reason, lambda p: p.id in ids)


@dataclass(frozen=True)
class Partition:
    """The records a method scores (in input order) and the ones it leaves out."""

    kept: list[Record]
    skipped: list[Skipped]

    def skipped_ids(self) -> list[str]:
        """The skipped records' ids, sorted."""
        return sorted(s.record_id for s in self.skipped)

    def diagnostics(self) -> dict[str, int | list[str]]:
        """``skipped_records`` and ``skipped_record_ids`` (:func:`skip_diagnostics`)."""
        return skip_diagnostics(self.skipped_ids())

    def warn(self, log: logging.Logger, method: str) -> None:
        """One warning line naming the skipped records (none when nothing is skipped)."""
        log_skipped(log, method, self.skipped)


def partition(records: Sequence[Record], *requirements: Requirement) -> Partition:
    """Split ``records`` into the records that meet every requirement and the others; a record
    left out carries the reason of the first requirement it fails (the order given)."""
    kept: list[Record] = []
    skipped: list[Skipped] = []
    for record in records:
        failed = next((r for r in requirements if not r.holds(record)), None)
        if failed is None:
            kept.append(record)
        else:
            skipped.append(Skipped(record.id, failed.reason))
    return Partition(kept, skipped)


def skip_diagnostics(record_ids: Iterable[str]) -> dict[str, int | list[str]]:
    """The two diagnostics keys every method reports about the records it left out."""
    ids = sorted(record_ids)
    return {"skipped_records": len(ids), "skipped_record_ids": ids}


def log_skipped(log: logging.Logger, method: str, skipped: Sequence[Skipped]) -> None:
    """One warning line: how many records ``method`` skipped, grouped by reason, each group
    naming its first :data:`LOGGED_IDS` ids (the diagnostics hold every id)."""
    if not skipped:
        return
    by_reason: dict[str, list[str]] = {}
    for entry in skipped:
        by_reason.setdefault(entry.reason, []).append(entry.record_id)
    groups = []
    for reason, ids in sorted(by_reason.items()):
        named = ", ".join(sorted(ids)[:LOGGED_IDS])
        more = f" and {len(ids) - LOGGED_IDS} more" if len(ids) > LOGGED_IDS else ""
        groups.append(f"{reason}: {named}{more}")
    log.warning("%s: %d record(s) skipped (%s)", method, len(skipped), "; ".join(groups))
