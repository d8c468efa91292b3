"""Semantic Entropy, expensive step: each sample's sequence log-probability and token count
under the ``proxy`` LLM (teacher-forced after ``prefix``) and the NLI class of every ordered
pair of a record's samples, each in one batched, cached request for the whole data set: the
pairs of the texts ``nli_input`` names, and with ``farquhar`` those of the question-conditioned
texts too (Farquhar et al.'s reading, unless ``nli_input`` already is ``question_answer``). No
sweep knob is read here: N, the choice of samples and the readings are the aggregate step's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from hallulab.artifacts.response_tokens.build import prefix_for
from hallulab.core.config import ConfigError, setting
from hallulab.data.schema import Passage
from hallulab.methods.semantic_entropy.raw import RecordSamples, SemanticEntropyScores
from hallulab.methods.skipped import Requirement, partition
from hallulab.nli.scorer import NLIConfig, NLIScorer
from hallulab.pipeline.context import BuildContext

NLI_INPUTS = ("answer", "question_answer")


@dataclass(frozen=True)
class SemanticEntropyScoreKnobs:
    """params ``semantic_entropy.score``."""

    prefix: str = setting(
        "{prompt}", doc="what each sample is conditioned on for its log-probability: '{prompt}' = the question"
    )
    nli_input: str = setting(
        "answer",
        choices=NLI_INPUTS,
        doc="answer: the sample alone (lm-polygraph); question_answer: the question before each (Kuhn et al.'s code)",
    )
    farquhar: bool = setting(
        True, doc="also classify the question-conditioned pairs, for Farquhar et al.'s reading (se_farquhar)"
    )


TWO_SAMPLES = Requirement("fewer than two samples", lambda p: len(p.samples) >= 2)


def nli_text(passage: Passage, sample: str, nli_input: str) -> str:
    """What the NLI model reads for one sample."""
    if nli_input == "question_answer" and passage.prompt:
        return f"{passage.prompt} {sample}"
    return sample


def pair_grid(passages: Sequence[Passage], nli_input: str) -> tuple[list[str], list[str]]:
    """Premises and hypotheses of every ordered pair a != b of each record's samples, record by
    record, a-major."""
    premises: list[str] = []
    hypotheses: list[str] = []
    for passage in passages:
        texts = [nli_text(passage, s, nli_input) for s in passage.samples]
        for a, first in enumerate(texts):
            for b, second in enumerate(texts):
                if a != b:
                    premises.append(first)
                    hypotheses.append(second)
    return premises, hypotheses


def nli_grids(passages: Sequence[Passage], nli_input: str, *, farquhar: bool) -> dict[str, tuple[list[str], list[str]]]:
    """NLI input -> the premises and hypotheses of every ordered pair (:func:`pair_grid`): the
    input ``nli_input`` names, and the question-conditioned one Farquhar et al. read."""
    inputs = [nli_input] + (["question_answer"] if farquhar and nli_input != "question_answer" else [])
    return {name: pair_grid(passages, name) for name in inputs}


def class_matrices(passages: Sequence[Passage], classes: Sequence[int]) -> list[list[list[int]]]:
    """Each record's N x N class matrix from the flat classes of :func:`pair_grid`'s order."""
    out = []
    at = 0
    for passage in passages:
        n = len(passage.samples)
        matrix = [[0] * n for _ in range(n)]
        for a in range(n):
            for b in range(n):
                if a != b:
                    matrix[a][b] = int(classes[at])
                    at += 1
        out.append(matrix)
    return out


def score(ctx: BuildContext) -> SemanticEntropyScores:
    knobs = ctx.params.typed(SemanticEntropyScoreKnobs, "semantic_entropy.score")
    chosen = partition(ctx.passages, TWO_SAMPLES)
    chosen.warn(ctx.log, "Semantic Entropy")
    passages = chosen.kept
    llm = ctx.resources.llm("proxy")
    if not llm.capabilities.teacher_forcing:
        raise ConfigError(
            f"llms.proxy ({ctx.resources.llm_name('proxy')}) cannot teacher-force the samples for se_sum; "
            "choose a white-box backend (hf, vllm, or a vLLM server)"
        )
    prefixes = [prefix_for(knobs.prefix, p) for p in passages for _ in p.samples]
    scored = llm.score(prefixes, [s for p in passages for s in p.samples]) if prefixes else []
    scorer = NLIScorer(ctx.params.typed(NLIConfig, "nli"), cache=ctx.resources.cache)
    grids = nli_grids(passages, knobs.nli_input, farquhar=knobs.farquhar)
    matrices = {}
    for name, (premises, hypotheses) in grids.items():
        classes = scorer.class_probs(premises, hypotheses, progress=True).argmax(axis=1) if premises else []
        matrices[name] = class_matrices(passages, classes)
    counts: Counter[str] = Counter()
    records: dict[str, RecordSamples] = {}
    token_at = 0
    for index, passage in enumerate(passages):
        n = len(passage.samples)
        log_probs: list[float | None] = []
        token_counts: list[int] = []
        for stats in scored[token_at : token_at + n]:
            log_probs.append(sum(t.logprob for t in stats) if stats else None)
            token_counts.append(len(stats))
            counts["samples_without_tokens"] += not stats
        token_at += n
        record: RecordSamples = {
            "log_probs": log_probs,
            "classes": matrices[knobs.nli_input][index],
            "token_counts": token_counts,
        }
        if knobs.farquhar:
            record["question_classes"] = matrices["question_answer"][index]
        records[passage.id] = record
        counts["records_scored"] += 1
    pairs = sum(len(premises) for premises, _ in grids.values())
    return SemanticEntropyScores(
        nli={"name": scorer.config.name, **scorer.identity},
        proxy=llm.llm.identity().as_key(),
        nli_input=knobs.nli_input,
        prefix=knobs.prefix,
        records=records,
        diagnostics={**dict(counts), "pairs": pairs, **chosen.diagnostics()},
    )
