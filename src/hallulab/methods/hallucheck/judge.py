"""HalluCheck's alignment judge as released (raavi02/ConFactCheck, ``main.py``:
``build_robust_prompt``, ``call_openai_model``, ``compare_orig_and_regenerated``).

The released code decides whether a regenerated answer agrees with the response by asking an
LLM, not by token F1 (its ``calculate_f1_score`` call is commented out): for one response, the
answer span read out of the response ("Extracted") and the one read out of each fact's
regenerated answer ("Regenerated") are listed, pair by pair, in **one** prompt
(``conf/prompts/hallucheck_judge.yaml``, the released wording: a fact-comparison expert, five
examples, "Return a Python-style list of exactly n binary values"). The reply is read as
released: the whole reply, stripped, as a Python literal (``ast.literal_eval``) that must be a
list of values in {0, 1}; 0 means the two spans refer to the same thing (aligned), 1 that they
do not (the fact is flagged). The released call is greedy (temperature 0) with 100 output
tokens.

What the released code leaves to an exception is counted here (:data:`OUTCOMES`): a reply that
is no such list (``malformed``; released: an empty list, and the response's later indexing
fails, so the whole response is dropped) or a list shorter than the pairs (``too_short``;
released: the same failure) leaves every fact of the prompt without a verdict; a longer list
(``too_long``) has its first n values read, as the released indexing reads them.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hallulab.llm.base import DecodingParams

#: how a judge's reply was read: a list of exactly n values, a longer one (its first n read),
#: a shorter one, or no list of 0 and 1 at all
OUTCOMES = ("parsed", "too_long", "too_short", "malformed")
#: the outcomes whose reply gives every pair a verdict
READ_OUTCOMES = ("parsed", "too_long")
#: (the answer span of the original response, the answer span of the regenerated answer)
SpanPair = tuple[str, str]


def pairs_text(pairs: Sequence[SpanPair]) -> str:
    """The numbered pairs as the released prompt lists them: ``1. Extracted: "..."`` and,
    indented under it, ``Regenerated: "..."``, one pair after another."""
    return "\n".join(
        f'{number}. Extracted: "{extracted}"\n   Regenerated: "{regenerated}"'
        for number, (extracted, regenerated) in enumerate(pairs, start=1)
    )


@dataclass(frozen=True)
class JudgeReply:
    """One reply read: ``verdicts`` per pair (True: the same thing, the released 0; False:
    not, the released 1; None: no verdict, the reply unread) and how it was read (:data:`OUTCOMES`)."""

    verdicts: tuple[bool | None, ...]
    outcome: str


def parse_judge_reply(reply: str, pairs: int) -> JudgeReply:
    """The released reading of a reply to a prompt of ``pairs`` pairs (module docstring)."""
    unread = JudgeReply((None,) * pairs, "malformed")
    try:
        value: Any = ast.literal_eval(reply.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return unread
    # the released test, ``x in [0, 1]``: 0 and 1, as int, float or bool
    if not isinstance(value, list) or not all(isinstance(x, int | float) and x in (0, 1) for x in value):
        return unread
    if len(value) < pairs:
        return JudgeReply((None,) * pairs, "too_short")
    verdicts = tuple(x == 0 for x in value[:pairs])
    return JudgeReply(verdicts, "parsed" if len(value) == pairs else "too_long")


class _Generates(Protocol):
    def generate(self, prompts: Sequence[Any], params: DecodingParams) -> Sequence[Any]: ...


class _Renders(Protocol):
    def messages(self, **values: str) -> list[dict[str, str]]: ...


def judge_prompts(
    llm: _Generates, template: _Renders, prompts: Sequence[Sequence[SpanPair]], max_new_tokens: int
) -> list[JudgeReply]:
    """One greedy reply per prompt of pairs (an empty prompt is not sent: no verdict to give)."""
    asked = [i for i, pairs in enumerate(prompts) if pairs]
    params = DecodingParams(max_new_tokens=max_new_tokens, temperature=0.0)
    rendered = [template.messages(n=str(len(prompts[i])), pairs=pairs_text(prompts[i])) for i in asked]
    replies = llm.generate(rendered, params) if asked else []
    out = [JudgeReply((), "parsed") for _ in prompts]
    for index, reply in zip(asked, replies, strict=True):
        out[index] = parse_judge_reply(str(reply.text), len(prompts[index]))
    return out
