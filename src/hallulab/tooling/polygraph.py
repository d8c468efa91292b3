"""Run lm-polygraph 0.7.0's calculators offline on the inputs they expect, for parity tests and
benchmarks: a greedy continuation read both ways (hallulab's token statistics and
lm-polygraph's alternatives), and the project's NLI model where lm-polygraph loads a DeBERTa.

Nothing in the pipeline imports lm-polygraph; the inputs are built by lm-polygraph's own rules
(``GreedyProbsCalculator``: the K highest log-probabilities of a position, the generated token
sorted first) from one forward pass, independently of hallulab's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

from hallulab.core.token_stats import TokenStats


def polygraph_nli(model_path: str, batch_size: int) -> Any:
    """The NLI model at ``model_path`` under the public attributes lm-polygraph's NLI
    calculators read (``deberta``, ``deberta_tokenizer``, ``device``, ``batch_size``), in place of
    ``lm_polygraph.utils.deberta.Deberta``, which loads a DeBERTa checkpoint from the hub."""
    import transformers

    model = transformers.AutoModelForSequenceClassification.from_pretrained(model_path).eval()
    model.config.label2id = {k.upper(): v for k, v in model.config.label2id.items()}  # its upper-case keys
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_path)
    return SimpleNamespace(deberta=model, deberta_tokenizer=tokenizer, device="cpu", batch_size=batch_size)


def polygraph_options(row: np.ndarray, written: int, k: int) -> list[tuple[int, float]]:
    """lm-polygraph's alternatives of one position (``GreedyProbsCalculator``): the K highest
    log-probabilities of ``row``, the written token sorted first, as (token id, log-probability)."""
    best = np.argpartition(row, -k)[-k:]
    options = [(int(t), float(row[t])) for t in best]
    options.sort(key=lambda option: option[0] == written, reverse=True)
    return options


@dataclass(frozen=True)
class GreedyText:
    """A greedy continuation: hallulab's token statistics, lm-polygraph's alternatives per K."""

    text: str
    claims_from: int  # claims start after the teacher-forced prefix
    ours: list[TokenStats]
    theirs: dict[int, list[list[tuple[int, float]]]]
    ids: list[int]


def greedy_continuation(
    llm: Any, prefix: str, ks: tuple[int, ...], stored_top: int, new_tokens: int = 40
) -> GreedyText:
    """Plain argmax continuation of ``prefix`` by the ``hf`` backend's model (no repetition
    penalty from a generation config), then one forward pass over it, read as hallulab's token
    statistics (top ``stored_top`` with ids) and as lm-polygraph's alternatives at each K."""
    import torch

    tokenizer, model = llm.tokenizer, llm.model
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    prompt = [start, *tokenizer(prefix, add_special_tokens=False)["input_ids"]]
    with torch.inference_mode():
        generated = list(prompt)
        for _ in range(new_tokens):
            following = int(model(input_ids=torch.tensor([generated])).logits[0, -1].argmax())
            if following == tokenizer.eos_token_id:
                break
            generated.append(following)
        ids = generated[1:]
        logits = model(input_ids=torch.tensor([[start, *ids]])).logits[0, :-1].float()
    logprobs = torch.log_softmax(logits, dim=-1)
    ours: list[TokenStats] = []
    theirs: dict[int, list[list[tuple[int, float]]]] = {k: [] for k in ks}
    for position, token_id in enumerate(ids):
        row = logprobs[position].numpy()
        values, top_ids = logprobs[position].topk(stored_top)
        ours.append(
            TokenStats(
                token=tokenizer.decode([token_id]),
                logprob=float(row[token_id]),
                token_id=token_id,
                top=tuple((tokenizer.decode([int(i)]), float(v)) for i, v in zip(top_ids, values, strict=True)),
                offset=len(tokenizer.decode(ids[:position])),
                top_ids=tuple(int(i) for i in top_ids),
            )
        )
        for k in ks:
            theirs[k].append(polygraph_options(row, token_id, k))
    return GreedyText(tokenizer.decode(ids), len(prefix), ours, theirs, ids)


def sentences_after(text: str, start: int) -> list[tuple[str, tuple[int, int]]]:
    """The sentences of ``text`` from ``start`` on (at least three words each), with their
    character spans: the claims a greedy continuation is scored on."""
    found = []
    for match in re.finditer(r"[^.!?\n]+[.!?]?", text[start:]):
        piece = match.group().strip()
        if len(piece.split()) >= 3:
            begin = start + match.start() + match.group().index(piece)
            found.append((piece, (begin, begin + len(piece))))
    return found
