"""What SAR's score step stores for its aggregate step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NotRequired, TypedDict

from hallulab.methods.raw_scores import CountsAndSkipped, JSONValue, RawScores


class RecordSar(TypedDict):
    """One record's N_max samples and its response. ``log_probs``: each sample's sequence
    log-probability under the proxy, the sum of its token log-probabilities (None: no token);
    ``similarity[a][b]``: g(s_a, s_b) of every ordered pair, the diagonal included;
    ``token_sar``: each sample's TokenSAR (None: no token, or every relevance zero; absent when
    ``sar.score.token_relevance`` is off); ``response_token_sar``: the response's TokenSAR, from
    its token statistics (None where it has none, or every relevance is zero)."""

    log_probs: list[float | None]
    similarity: list[list[float]]
    token_sar: NotRequired[list[float | None]]
    response_token_sar: float | None


@dataclass
class SarScores(RawScores):
    """Per record, the samples' log-probabilities, TokenSARs and similarities, and the
    response's TokenSAR."""

    proxy: dict[str, JSONValue]
    similarity: dict[str, JSONValue]
    prefix: str
    token_relevance: bool
    records: dict[str, RecordSar]
    diagnostics: CountsAndSkipped
