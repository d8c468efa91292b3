"""Building the MQAG questions and their answers (the expensive step): G1/G2 for every
sentence, then A and U for every valid question against the response and every sample."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hallulab.core.call_cache import CallCache, cache_key
from hallulab.core.errors import RecordError
from hallulab.data.schema import Record
from hallulab.methods.selfcheck_mqag.protocol import GeneratedQuestion, MQAGRoles
from hallulab.methods.selfcheck_mqag.raw import MQAGQuestion, StoredMQAG


def question_seed(seed: int, passage_id: str, sentence_index: int, question_index: int) -> int:
    """A stable per-question seed (G1 sampling, option shuffling)."""
    digest = np.random.SeedSequence([seed, sentence_index, question_index, *passage_id.encode("utf-8")])
    return int(digest.generate_state(1)[0])


def build_questions(
    passages: Sequence[Record],
    roles: MQAGRoles,
    *,
    num_questions: int,
    seed: int,
    cache: CallCache | None = None,
) -> StoredMQAG:
    """G1/G2 for every sentence (``num_questions`` each), then A and U for every valid
    question against R and every stored sample, each role in one batched request. Roles whose
    calls the call cache does not already see (``answer_call_label``: the hub's models) have their
    A and U results cached here, keyed on the roles' identity and counted under that label; the
    LLM substitute's calls are cached and counted by its LLM, once."""
    slots: list[tuple[str, int]] = []
    sentences: list[str] = []
    contexts: list[str] = []
    seeds: list[int] = []
    for passage in passages:
        if not passage.samples:
            raise RecordError(passage.id, "samples", "SelfCheck-MQAG needs at least one sample")
        for i, sentence in enumerate(passage.sentences):
            for q in range(num_questions):
                slots.append((passage.id, i))
                sentences.append(sentence)
                contexts.append(passage.response or "")
                seeds.append(question_seed(seed, passage.id, i, q))
    generated = roles.questions(sentences, contexts, seeds)

    by_id = {p.id: p for p in passages}
    pending = [(slot, g) for slot, g in zip(slots, generated, strict=True) if g is not None]
    a_requests: list[tuple[GeneratedQuestion, str]] = []
    for (pid, _), question in pending:
        passage = by_id[pid]
        a_requests.extend((question, context) for context in (passage.response or "", *passage.samples))
    probabilities = _cached_role(cache, roles, "mqag.answer", a_requests, roles.answer)
    answerable = _cached_role(cache, roles, "mqag.answerability", a_requests, roles.answerability)

    questions: dict[str, list[list[MQAGQuestion]]] = {p.id: [[] for _ in p.sentences] for p in passages}
    cursor = 0
    for (pid, sentence_index), question in pending:
        width = 1 + len(by_id[pid].samples)
        p_rows = np.asarray(probabilities[cursor : cursor + width], dtype=np.float64)
        u_rows = np.asarray(answerable[cursor : cursor + width], dtype=np.float64)
        cursor += width
        questions[pid][sentence_index].append(
            MQAGQuestion(
                question.question,
                question.options,
                question.answer_index,
                p_rows[0],
                float(u_rows[0]),
                p_rows[1:],
                u_rows[1:],
            )
        )
    diagnostics = {"questions_asked": len(slots), "questions_valid": len(pending), **roles.counts.counts}
    return StoredMQAG(roles.identity, questions, diagnostics)


def _cached_role(
    cache: CallCache | None,
    roles: MQAGRoles,
    kind: str,
    requests: list[tuple[GeneratedQuestion, str]],
    compute: Callable[[Sequence[GeneratedQuestion], Sequence[str]], np.ndarray],
) -> list[Any]:
    def run(batch: list[tuple[GeneratedQuestion, str]]) -> list[Any]:
        return compute([q for q, _ in batch], [c for _, c in batch]).tolist()

    label = roles.answer_call_label
    if cache is None or label is None:
        return run(requests) if requests else []
    keys = [cache_key(kind, roles.identity, q.question, list(q.options), c) for q, c in requests]
    return cache.map(keys, requests, run, batch_size=256, progress=f"{label}: {kind}")
