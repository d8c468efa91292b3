"""The correction's judge (FactSelfCheck Sec. 4.3, Table 3): one call shape for every question
it is asked (a corrected sentence against the reference, a development fact against it).

The judge answers greedily in at most four tokens; its verdict is the reply read as yes / no
(:func:`hallulab.correction.parsing.parse_verdict`). A white-box judge (one that returns the top-K
alternatives, asked with ``top_k`` > 0) also gives its first reply token's P(No) against P(Yes)
(:func:`hallulab.core.token_stats.yes_no_probability`), the reading that needs no reply format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hallulab.core.token_stats import yes_no_probability
from hallulab.correction.parsing import parse_verdict
from hallulab.llm.base import DecodingParams, Prompt
from hallulab.llm.cached import CachedLLM

JUDGE_MAX_NEW_TOKENS = 4


@dataclass(frozen=True)
class JudgeReply:
    """One answer of the judge."""

    verdict: str | None  #: "factual", "non-factual", or None where the reply is neither
    p_no: float | None  #: the first token's P(No) against P(Yes); None without white-box tokens
    white_box: bool  #: whether the judge was asked for its top-K alternatives


def judge_replies(judge: CachedLLM, questions: Sequence[Prompt], top_k: int) -> list[JudgeReply]:
    """The judge's answer to each of ``questions`` (rendered prompts), in order."""
    if not questions:
        return []
    white_box = top_k > 0 and bool(judge.capabilities.top_k_alternatives)
    params = DecodingParams(
        max_new_tokens=JUDGE_MAX_NEW_TOKENS, temperature=0.0, top_k_alternatives=top_k if white_box else 0
    )
    return [
        JudgeReply(parse_verdict(reply.text), yes_no_probability(reply.tokens) if white_box else None, white_box)
        for reply in judge.generate(list(questions), params)
    ]
