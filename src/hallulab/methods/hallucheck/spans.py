"""HalluCheck's answer spans: the part of a text that answers a question (§3, "fact alignment").

The released code (raavi02/ConFactCheck, ``main.py``, ``compare_orig_and_regenerated``) reads
the answer to each generated question twice with an extractive QA model (transformers'
``question-answering`` pipeline, its default model): once out of the original response and
once out of the regenerated answer, then compares the two spans; the KS check then reads the
steps of the regenerated span (``check_with_probability``). Neither reading looks at the fact.

Two readers fill the same :class:`ReadSpan`:

* ``llm`` (offline): the configured LLM role (``llms.qa``) is asked to copy the span from the
  text (``conf/prompts/hallucheck_span.yaml``) and :func:`parse_span` turns its reply into a
  span *of the text*: the reply found in the text as written (``copied``), else found ignoring
  case (``copied_nocase``); failing both, the stated fallback is the text's word window that
  best matches the reply by SQuAD token F1 (``matched``, F1 > 0), and failing that the whole
  text (``whole_text``). How each span was read is kept with it and counted in the diagnostics.
* ``hub``: an extractive QA model by hub id, as released (:class:`HubSpanReader`): the span
  maximising p_start(i) * p_end(j) over context tokens i <= j < i + 15, the pipeline's
  defaults (:func:`best_span`); needs the network once.

Every span is trimmed of whitespace and punctuation at its ends, as an extractive span starts
and ends on a word (:func:`hallulab.methods.hallucheck.checks.extracted_span`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from hallulab.llm.base import DecodingParams
from hallulab.methods.hallucheck.checks import answer_span, extracted_span, token_f1
from hallulab.methods.hallucheck.raw import ReadSpan

#: how a span was read: the reply found in the text, found ignoring case, its best-matching
#: window (fallback), the whole text (last fallback); ``extracted`` by the hub's QA model
HOW_READ = ("copied", "copied_nocase", "matched", "whole_text", "extracted")
#: the released pipeline's longest answer, in tokens (``max_answer_len``)
MAX_ANSWER_TOKENS = 15
_LABEL = re.compile(r"^\s*(?:answer|span|the span is)\s*[:\-]\s*", re.I)
_QUOTES = "\"'`“”‘’«»"


def _span(text: str, start: int, end: int, how: str) -> ReadSpan | None:
    trimmed = extracted_span(text, (start, end))
    if trimmed is None:
        return None
    return {"text": text[trimmed[0] : trimmed[1]], "start": trimmed[0], "end": trimmed[1], "how": how}


def clean_reply(reply: str) -> str:
    """The reply's first non-empty line without an "Answer:" label or enclosing quotes."""
    line = next((ln for ln in reply.splitlines() if ln.strip()), "")
    return _LABEL.sub("", line).strip().strip(_QUOTES).strip()


def parse_span(reply: str, text: str) -> ReadSpan | None:
    """The span of ``text`` that the reader's ``reply`` names (module docstring for the order of
    readings); None only when the text has no word."""
    whole = _span(text, 0, len(text), "whole_text")
    if whole is None:
        return None
    wanted = clean_reply(reply)
    candidates = [wanted, wanted.strip(".,;:!? ")] if wanted else []
    for candidate in filter(None, candidates):
        at = text.find(candidate)
        if at >= 0 and (found := _span(text, at, at + len(candidate), "copied")):
            return found
    for candidate in filter(None, candidates):
        match = re.search(re.escape(candidate), text, re.I)
        if match and (found := _span(text, match.start(), match.end(), "copied_nocase")):
            return found
    window = answer_span(text, wanted) if wanted else None
    if window is not None and token_f1(text[window[0] : window[1]], wanted) > 0:
        found = _span(text, window[0], window[1], "matched")
        if found is not None:
            return found
    return whole


class _Generates(Protocol):
    def generate(self, prompts: Sequence[Any], params: DecodingParams) -> Sequence[Any]: ...


class _Renders(Protocol):
    def messages(self, **values: str) -> list[dict[str, str]]: ...


def read_spans_with_llm(
    llm: _Generates, template: _Renders, pairs: Sequence[tuple[str, str]], max_new_tokens: int
) -> list[ReadSpan | None]:
    """The ``llm`` reader: one greedy reply per (question, text), parsed by :func:`parse_span`;
    a text without words is not sent (None)."""
    asked = [i for i, (_, text) in enumerate(pairs) if text.strip()]
    params = DecodingParams(max_new_tokens=max_new_tokens, temperature=0.0)
    replies = llm.generate([template.messages(question=pairs[i][0], text=pairs[i][1]) for i in asked], params)
    out: list[ReadSpan | None] = [None] * len(pairs)
    for index, reply in zip(asked, replies, strict=True):
        out[index] = parse_span(str(reply.text), pairs[index][1])
    return out


def best_span(
    start_logits: Sequence[float], end_logits: Sequence[float], context: Sequence[bool], max_len: int = 15
) -> tuple[int, int] | None:
    """Token indices (i, j), i <= j < i + max_len, both in the context, maximising
    softmax(start)_i * softmax(end)_j over the context tokens (the released pipeline's choice);
    None without a context token."""
    mask = np.asarray(context, dtype=bool)
    if not mask.any():
        return None

    def probabilities(logits: Sequence[float]) -> np.ndarray:
        values = np.where(mask, np.asarray(logits, dtype=np.float64), -np.inf)
        weights = np.exp(values - values[mask].max())
        return weights / weights.sum()

    scores = np.outer(probabilities(start_logits), probabilities(end_logits))
    size = len(mask)
    allowed = np.triu(np.ones((size, size), dtype=bool)) & ~np.triu(np.ones((size, size), dtype=bool), k=max_len)
    scores = np.where(allowed & mask[:, None] & mask[None, :], scores, -1.0)
    start, end = np.unravel_index(int(np.argmax(scores)), scores.shape)
    return int(start), int(end)


class HubSpanReader:
    """The released reader: an extractive QA model by hub id (transformers'
    ``AutoModelForQuestionAnswering``; the question-answering pipeline the released code calls
    is gone from transformers 5, so its span choice is :func:`best_span`). A context longer
    than the model's 384 tokens is truncated, where the pipeline would slide a window."""

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id

    @cached_property
    def _loaded(self) -> tuple[Any, Any]:
        import transformers

        tokenizer = transformers.AutoTokenizer.from_pretrained(self.model_id)
        model = transformers.AutoModelForQuestionAnswering.from_pretrained(self.model_id).eval()
        return tokenizer, model

    def read(self, pairs: Sequence[tuple[str, str]]) -> list[ReadSpan | None]:
        import torch

        tokenizer, model = self._loaded
        out: list[ReadSpan | None] = []
        for question, text in pairs:
            if not text.strip():
                out.append(None)
                continue
            encoded = tokenizer(
                question,
                text,
                truncation="only_second",
                max_length=384,
                return_offsets_mapping=True,
                return_tensors="pt",
            )
            offsets = encoded.pop("offset_mapping")[0].tolist()
            context = [sequence == 1 for sequence in encoded.sequence_ids(0)]
            with torch.inference_mode():
                logits = model(**encoded)
            chosen = best_span(
                logits.start_logits[0].tolist(), logits.end_logits[0].tolist(), context, MAX_ANSWER_TOKENS
            )
            if chosen is None:
                out.append(parse_span("", text))
                continue
            start, end = offsets[chosen[0]][0], offsets[chosen[1]][1]
            out.append(_span(text, start, end, "extracted") or parse_span("", text))
        return out
