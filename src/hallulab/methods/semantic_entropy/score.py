"""Semantic Entropy, expensive step: each sample's sequence log-probability and token count
under the ``proxy`` LLM (teacher-forced after ``prefix``, one batched, cached request for the
whole data set) and the NLI classes of the sample pairs the semantic classes read: of the texts
``nli_input`` names for lm-polygraph's rule, and with ``farquhar`` of the question-conditioned
texts for Farquhar et al.'s two rules (the aggregate step writes a variant for each).

``pairs: lazy`` (the default) scores only the pairs the greedy clusterings read, in waves of
batched, cached NLI requests across the data set (:mod:`hallulab.methods.semantic_entropy.pairs`);
they hold the pairs of every prefix of the samples, so every ``samples.used`` with
``samples.selection: first`` reads stored classes only. ``pairs: all`` scores every ordered pair
in one request, which any choice of samples (a seeded random subset too) can read. No sweep knob
is read here: N, the choice of samples and the readings are the aggregate step's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from hallulab.artifacts.response_tokens.build import prefix_for
from hallulab.core.config import ConfigError
from hallulab.data.schema import Record
from hallulab.methods.semantic_entropy.knobs import ALL_PAIRS, SemanticEntropyScoreKnobs
from hallulab.methods.semantic_entropy.pairs import (
    FARQUHAR_CLUSTERINGS,
    LM_POLYGRAPH,
    ClassProbs,
    Clustering,
    PairRequest,
    lazy_class_matrices,
)
from hallulab.methods.semantic_entropy.raw import RecordSamples, SemanticEntropyScores
from hallulab.methods.skipped import Requirement, partition
from hallulab.nli.scorer import NLIKnobs, NLIScorer
from hallulab.pipeline.context import BuildContext

TWO_SAMPLES = Requirement("fewer than two samples", lambda p: len(p.samples) >= 2)


def nli_text(record: Record, sample: str, nli_input: str) -> str:
    """What the NLI model reads for one sample."""
    if nli_input == "question_answer" and record.prompt:
        return f"{record.prompt} {sample}"
    return sample


def clusterings_by_input(nli_input: str, *, farquhar: bool) -> dict[str, tuple[Clustering, ...]]:
    """NLI input -> the clusterings that read its pairs: lm-polygraph's rule reads the texts
    ``nli_input`` names; Farquhar et al.'s two rules (a variant each in the aggregate step) the
    question-conditioned texts, which are the same texts when ``nli_input`` is ``question_answer``."""
    found: dict[str, tuple[Clustering, ...]] = {nli_input: (LM_POLYGRAPH,)}
    if farquhar:
        found["question_answer"] = (*found.get("question_answer", ()), *FARQUHAR_CLUSTERINGS)
    return found


def pair_grid(records: Sequence[Record], nli_input: str) -> tuple[list[str], list[str]]:
    """Premises and hypotheses of every ordered pair a != b of each record's samples, record by
    record, a-major."""
    premises: list[str] = []
    hypotheses: list[str] = []
    for record in records:
        texts = [nli_text(record, s, nli_input) for s in record.samples]
        for a, first in enumerate(texts):
            for b, second in enumerate(texts):
                if a != b:
                    premises.append(first)
                    hypotheses.append(second)
    return premises, hypotheses


def nli_grids(records: Sequence[Record], nli_input: str, *, farquhar: bool) -> dict[str, tuple[list[str], list[str]]]:
    """NLI input -> the premises and hypotheses of every ordered pair (:func:`pair_grid`): the
    input ``nli_input`` names, and the question-conditioned one Farquhar et al. read."""
    return {name: pair_grid(records, name) for name in clusterings_by_input(nli_input, farquhar=farquhar)}


def class_matrices(records: Sequence[Record], classes: Sequence[int]) -> list[list[list[int]]]:
    """Each record's N x N class matrix from the flat classes of :func:`pair_grid`'s order."""
    out = []
    at = 0
    for record in records:
        n = len(record.samples)
        matrix = [[0] * n for _ in range(n)]
        for a in range(n):
            for b in range(n):
                if a != b:
                    matrix[a][b] = int(classes[at])
                    at += 1
        out.append(matrix)
    return out


@dataclass(frozen=True)
class NLIClasses:
    """Per NLI input, each record's class matrix (in the order of the records); how many pairs
    were scored (the diagonal left out), in how many NLI requests and waves (a wave: the pairs
    that the pairs scored before it make needed; every pair at once is one wave)."""

    matrices: dict[str, list[list[list[int]]]]
    pairs: int
    requests: int
    waves: int


def nli_classes(
    records: Sequence[Record], nli_input: str, *, farquhar: bool, pairs: str, class_probs: ClassProbs
) -> NLIClasses:
    """The NLI classes the score step stores, ``pairs`` as :class:`SemanticEntropyScoreKnobs`
    says: every ordered pair in one ``class_probs`` request per NLI input, or lazily."""
    readers = clusterings_by_input(nli_input, farquhar=farquhar)
    if pairs == ALL_PAIRS:
        matrices = {}
        count = requests = 0
        for name in readers:
            premises, hypotheses = pair_grid(records, name)
            classes = class_probs(premises, hypotheses).argmax(axis=1) if premises else []
            matrices[name] = class_matrices(records, classes)
            count += len(premises)
            requests += bool(premises)
        return NLIClasses(matrices, count, requests, min(requests, 1))
    names = list(readers)
    wanted = [
        PairRequest([nli_text(record, s, name) for s in record.samples], readers[name])
        for name in names
        for record in records
    ]
    found = lazy_class_matrices(wanted, class_probs)
    size = len(records)
    lazy = {name: [m.tolist() for m in found.matrices[at * size : (at + 1) * size]] for at, name in enumerate(names)}
    return NLIClasses(lazy, found.pairs, found.requests, found.waves)


def score(ctx: BuildContext) -> SemanticEntropyScores:
    knobs = ctx.params.typed(SemanticEntropyScoreKnobs, "semantic_entropy.score")
    chosen = partition(ctx.records, TWO_SAMPLES)
    chosen.warn(ctx.log, "Semantic Entropy")
    records = chosen.kept
    llm = ctx.resources.llm("proxy")
    if not llm.capabilities.teacher_forcing:
        raise ConfigError(
            f"llms.proxy ({ctx.resources.llm_name('proxy')}) cannot teacher-force the samples for se_sum; "
            "choose a white-box backend (hf, vllm, or a vLLM server)"
        )
    prefixes = [prefix_for(knobs.prefix, p) for p in records for _ in p.samples]
    scored = llm.score(prefixes, [s for p in records for s in p.samples]) if prefixes else []
    scorer = NLIScorer(ctx.params.typed(NLIKnobs, "nli"), cache=ctx.resources.cache)
    found = nli_classes(
        records,
        knobs.nli_input,
        farquhar=knobs.farquhar,
        pairs=knobs.pairs,
        class_probs=lambda premises, hypotheses: scorer.class_probs(premises, hypotheses, progress=True),
    )
    counts: Counter[str] = Counter()
    by_record: dict[str, RecordSamples] = {}
    token_at = 0
    for index, record in enumerate(records):
        n = len(record.samples)
        log_probs: list[float | None] = []
        token_counts: list[int] = []
        for stats in scored[token_at : token_at + n]:
            log_probs.append(sum(t.logprob for t in stats) if stats else None)
            token_counts.append(len(stats))
            counts["samples_without_tokens"] += not stats
        token_at += n
        values_of: RecordSamples = {
            "log_probs": log_probs,
            "classes": found.matrices[knobs.nli_input][index],
            "token_counts": token_counts,
        }
        if knobs.farquhar:
            values_of["question_classes"] = found.matrices["question_answer"][index]
        by_record[record.id] = values_of
        counts["records_scored"] += 1
    return SemanticEntropyScores(
        nli={"name": scorer.config.name, **scorer.identity},
        proxy=llm.llm.identity().as_key(),
        nli_input=knobs.nli_input,
        prefix=knobs.prefix,
        records=by_record,
        diagnostics={
            **dict(counts),
            "pairs": found.pairs,
            "nli_requests": found.requests,
            "nli_waves": found.waves,
            **chosen.diagnostics(),
        },
        pairs=knobs.pairs,
    )
