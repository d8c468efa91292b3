"""What CoCoA's score step stores for its aggregate step."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.methods.raw_scores import CountsAndSkipped, JSONValue, RawScores


@dataclass
class CocoaScores(RawScores):
    """Per record, the response's similarity to each of its N_max samples, both orders averaged:
    ``records[id][j]`` = (g(response, s_j) + g(s_j, response)) / 2."""

    similarity: dict[str, JSONValue]
    records: dict[str, list[float]]
    diagnostics: CountsAndSkipped
