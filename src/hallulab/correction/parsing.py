"""Reading the corrector's numbered sentences and the judge's verdict."""

from __future__ import annotations

import re

_NUMBERED = re.compile(r"^\s*(\d+)[.)]\s*(.+?)\s*$")
VERDICTS = ("factual", "non-factual", "refused")


def parse_numbered(reply: str, count: int) -> list[str] | None:
    """The ``count`` numbered lines of a reply, in order; None when they are not all there
    (the correction is then counted as malformed and the original sentences stand)."""
    found: dict[int, str] = {}
    for line in reply.splitlines():
        match = _NUMBERED.match(line)
        if match:
            number = int(match.group(1))
            if 1 <= number <= count and number not in found:
                found[number] = match.group(2)
    if len(found) != count:
        return None
    return [found[i] for i in range(1, count + 1)]


def parse_verdict(reply: str) -> str | None:
    """yes -> factual, no -> non-factual, refused -> refused; None for anything else."""
    text = reply.strip().lower()
    if text.startswith("refused"):
        return "refused"
    if text.startswith("yes"):
        return "factual"
    if text.startswith("no"):
        return "non-factual"
    return None
