"""The ``response_tokens`` artifact's knob class, kept apart from the code that builds the
artifact so that declaring it imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.config import setting


@dataclass(frozen=True)
class ResponseTokensKnobs:
    """params ``response_tokens``."""

    top_k: int = setting(10, minimum=0, doc="K_max alternatives stored per token (CCP: 10)")
    prefix: str = setting(
        "", doc="what the response is conditioned on: '' = the start token only; '{prompt}' = the record's prompt"
    )
