"""What Semantic Entropy's score step stores for its aggregate step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NotRequired, TypedDict

from hallulab.methods.raw_scores import CountsAndSkipped, JSONValue, RawScores


class RecordSamples(TypedDict):
    """One record's N_max samples: each sample's sequence log-probability under the proxy
    (None when it has no token), and the NLI classes of ordered pairs, ``classes[a][b]`` for
    premise a and hypothesis b (0 entailment, 1 neutral, 2 contradiction; -1 a pair the score
    step left unscored, as no semantic class of the first N samples reads it, for any N; the
    diagonal 0), of the texts ``nli_input`` names. For Farquhar et al.'s reading: each sample's
    number of tokens (its log-probability over it is the length-normalised one) and
    ``question_classes``, the same matrix for the question-conditioned texts (both absent in a
    file stored without them; ``question_classes`` only with ``semantic_entropy.score.farquhar``)."""

    log_probs: list[float | None]
    classes: list[list[int]]
    token_counts: NotRequired[list[int]]
    question_classes: NotRequired[list[list[int]]]


@dataclass
class SemanticEntropyScores(RawScores):
    """Per record, the samples' log-probabilities and pairwise NLI classes; ``pairs``: which
    pairs were scored (``semantic_entropy.score.pairs``: lazy, the pairs the classes of every
    prefix of the samples read; all, every ordered pair)."""

    nli: dict[str, JSONValue]
    proxy: dict[str, JSONValue]
    nli_input: str
    prefix: str
    records: dict[str, RecordSamples]
    diagnostics: CountsAndSkipped
    pairs: str = "all"
