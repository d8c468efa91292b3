"""What Self-Familiarity's score step stores (:class:`hallulab.methods.raw_scores.RawScores`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from hallulab.methods.raw_scores import RawScores


class StoredScoreKnobs(TypedDict):
    """The score step's settings as stored: the fields of
    :class:`hallulab.methods.self_familiarity.knobs.SelfFamiliarityScoreKnobs`, in their order,
    tuples as lists."""

    explanation_tokens: int
    beam_size: int
    answer_tokens: int
    processings: list[str]
    baselines: list[str]
    forward_tokens: int
    top_k: int
    baseline_samples: int
    rephrase_tokens: int
    rephrase_temperature: float
    rephrase_seed: int
    self_detection_answer_tokens: int
    equivalence_threshold: float
    sentence_encoder_package: str | None
    sentence_encoder: str
    masking: str


class ConstrainedHypothesis(TypedDict):
    """A finished hypothesis of the constrained beam search
    (:attr:`hallulab.llm.base.ConstrainedResult.hypotheses`): its text, summed log-probability
    (an ending EOS token's included), length in tokens (the EOS token not counted) and how it
    ended ("eos" or "length")."""

    text: str
    logprob: float
    length: int
    ended: bool


class ConceptSearch(TypedDict):
    """One concept's explanation, the masked instruction (and how many spans of the explanation
    were masked), the constraint sequences forced, the prompt length P in tokens (BOS + the
    released wrapper: what ``total`` length normalisation adds; a file stored without it reads
    as 0), the model's input in tokens (what ``input`` adds; without it, P), the hypotheses the
    search returned, best first by sum / (P + length), and how many."""

    explanation: str
    masked: str
    masked_spans: int
    forced: int
    prompt_tokens: NotRequired[int]
    input_tokens: NotRequired[int]
    hypotheses: list[ConstrainedHypothesis]
    finished: int


class ForwardReply(TypedDict):
    """A Forward-Inference / Forward-Self reply: its text, summed log-probability (None without
    token statistics) and its first token's top-K as ``[token, log-probability]`` pairs."""

    text: str
    logprob: float | None
    first_top: list[list[str | float]]


class SelfDetection(TypedDict):
    """Self-Detection of one record: the rephrasings (empty: none formed), the answers, how
    equivalence was judged, each answer's cluster and the clusters' entropy (both None with
    fewer than 2 answers)."""

    rephrasings: list[str]
    answers: list[str]
    equivalence: str
    clusters: list[int] | None
    entropy: float | None


class SampleSimilarities(TypedDict, total=False):
    """The sampling baselines asked for: the central sample's mean similarity (None: fewer than
    2 non-empty samples)."""

    sample_bertscore: float | None
    sample_sentencescore: float | None


class RecordBaselines(SampleSimilarities, total=False):
    """Table 2's baselines of one record, those the score step was asked for."""

    forward_inference: ForwardReply
    forward_self: ForwardReply
    self_detection: SelfDetection


@dataclass
class SelfFamiliarityScores(RawScores):
    """``knobs``: the score step's settings; ``concepts``: concept -> explanation, masked
    explanation, constrained-search hypotheses; ``baselines``: record -> Table 2's baseline
    replies and similarities; ``counts``: what the steps' handling rules did;
    ``skipped_record_ids``: the records left out, sorted (no prompt: :mod:`hallulab.methods.skipped`)."""

    knobs: StoredScoreKnobs
    concepts: dict[str, ConceptSearch]
    baselines: dict[str, RecordBaselines]
    counts: dict[str, int] = field(default_factory=dict)
    skipped_record_ids: list[str] = field(default_factory=list)
