"""Errors a person can act on: bad input, bad settings, a missing file or model.

Stages print such an error as one line (what, where, what to do) and exit with status 2;
anything else is a bug and keeps its traceback. ``HALLULAB_DEBUG=1`` shows the traceback of
every error.
"""

from __future__ import annotations


class UserFacingError(Exception):
    """Marker base: the message alone tells the user what went wrong and where."""


class RecordError(ValueError, UserFacingError):
    """A record failed validation; names the record, the field and what was expected."""

    def __init__(self, record_id: str, field_name: str, problem: str) -> None:
        self.record_id = record_id
        self.field_name = field_name
        self.problem = problem
        super().__init__(f"record {record_id!r}, field {field_name!r}: {problem}")


class StaleScoresError(ValueError, UserFacingError):
    """Stored raw scores that are not the shape their method's class reads (written by another
    version of its score step, or edited by hand): one line naming the file and what differs."""

    def __init__(self, where: str, kind: str, problem: str) -> None:
        super().__init__(f"{where or kind}: not the stored scores of {kind} ({problem}); re-run its score stage")
