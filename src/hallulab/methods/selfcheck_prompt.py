"""SelfCheckGPT with LLM prompting (Manakul et al., 2023, §5.5).

For sentence r_i and sample S_n the evaluator LLM reads

    Context: {S_n}

    Sentence: {r_i}

    Is the sentence supported by the context above? Answer Yes or No.

    Answer:

(the released code's wording; newlines inside the sample become spaces), decoded greedily
for at most 5 new tokens. The reply maps to x_i^n = 0 for Yes, 1 for No and 0.5 for anything
else (parsing rule: lower-case, strip, then ``startswith("yes")`` / ``startswith("no")``),
and the sentence score is the mean over samples:  S_Prompt(i) = (1/N) sum_n x_i^n.

Replies that are neither Yes nor No are not dropped: they score 0.5, as the paper says, and
are counted (and a few kept as examples) in the stage's diagnostics. Any LLM backend works
(hf, vLLM, an OpenAI-compatible server); every call goes through the call cache.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hallulab.data.schema import Passage
from hallulab.llm.base import DecodingParams
from hallulab.llm.cached import CachedLLM
from hallulab.methods.sample_matrix import sentence_sample_grid, unflatten

PAPER_TEMPLATE = (
    "Context: {context}\n\nSentence: {sentence}\n\n"
    "Is the sentence supported by the context above? Answer Yes or No.\n\nAnswer: "
)
VERDICTS = {"yes": 0.0, "no": 1.0}
OTHER = 0.5


@dataclass(frozen=True)
class PromptConfig:
    """``selfcheck_prompt`` section (its evaluator LLM is the ``llm`` sub-section)."""

    template: str = PAPER_TEMPLATE
    max_new_tokens: int = 5


def build_prompt(template: str, context: str, sentence: str) -> str:
    return template.format(context=context.replace("\n", " "), sentence=sentence)


def parse_verdict(reply: str) -> tuple[float, str]:
    """(score, kind) with kind in yes / no / other."""
    text = reply.lower().strip()
    for word, score in VERDICTS.items():
        if text.startswith(word):
            return score, word
    return OTHER, "other"


@dataclass
class PromptVerdicts:
    """What the stage reports beside the matrix: reply counts and examples of non-Yes/No replies."""

    counts: Counter[str] = field(default_factory=Counter)
    other_examples: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        total = sum(self.counts.values())
        return {
            "replies": total,
            "yes": self.counts["yes"],
            "no": self.counts["no"],
            "other": self.counts["other"],
            "other_rate": self.counts["other"] / total if total else 0.0,
            "other_examples": self.other_examples,
        }


def passage_matrices(
    passages: Sequence[Passage], llm: CachedLLM, config: PromptConfig
) -> tuple[dict[str, np.ndarray], PromptVerdicts]:
    """Every passage's I x N_max matrix of verdict scores, all prompts in one cached request
    (sent in length order, so batches pad little)."""
    sentences, samples = sentence_sample_grid(passages, "SelfCheck-Prompt")
    prompts = [
        build_prompt(config.template, sample, sentence) for sentence, sample in zip(sentences, samples, strict=True)
    ]
    unique = sorted(dict.fromkeys(prompts), key=len)
    params = DecodingParams(max_new_tokens=config.max_new_tokens, temperature=0.0)
    replies = dict(zip(unique, (g.text for g in llm.generate(unique, params)), strict=True))
    verdicts = PromptVerdicts()
    flat = np.empty(len(prompts), dtype=np.float64)
    for index, prompt in enumerate(prompts):
        score, kind = parse_verdict(replies[prompt])
        flat[index] = score
        verdicts.counts[kind] += 1
        if kind == "other" and len(verdicts.other_examples) < 10:
            verdicts.other_examples.append(replies[prompt])
    return unflatten(passages, flat), verdicts
