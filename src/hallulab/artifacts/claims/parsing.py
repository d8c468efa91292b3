"""Reading an extractor's reply: one claim a line, each line starting with "- "."""

from __future__ import annotations

import re

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(?P<claim>.+?)\s*$")
_NONE = re.compile(r"there (?:are|is)(?: not|n't| no) any claims?|no claims?", re.I)


def parse_claims(reply: str) -> list[str] | None:
    """The claims of a reply; ``[]`` when the reply says there are none; None when it has no
    claim line at all (unparseable: counted by the caller)."""
    claims = []
    for line in reply.splitlines():
        match = _BULLET.match(line)
        if match is None:
            continue
        text = match.group("claim").strip().strip('"')
        if _NONE.search(text):
            continue
        if text:
            claims.append(text)
    if claims:
        return claims
    return [] if _NONE.search(reply) else None
