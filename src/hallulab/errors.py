"""Errors a person can act on: bad input, bad settings, a missing file or model.

Stages print such an error as one line (what, where, what to do) and exit with status 2;
anything else is a bug and keeps its traceback. ``HALLULAB_DEBUG=1`` shows the traceback of
every error.
"""

from __future__ import annotations


class UserFacingError(Exception):
    """Marker base: the message alone tells the user what went wrong and where."""
