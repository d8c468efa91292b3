"""SelfCheckGPT with LLM prompting (Manakul et al., 2023, §5.5).

For sentence r_i and sample S_n the evaluator LLM reads

    Context: {S_n}

    Sentence: {r_i}

    Is the sentence supported by the context above? Answer Yes or No.

    Answer:

(the released code's wording, ``conf/prompts/selfcheck_prompt.yaml``; newlines inside the
sample become spaces), decoded greedily
for at most 5 new tokens. The reply maps to x_i^n = 0 for Yes, 1 for No and 0.5 for anything
else (parsing rule: lower-case, strip, then ``startswith("yes")`` / ``startswith("no")``),
and the sentence score is the mean over samples:  S_Prompt(i) = (1/N) sum_n x_i^n.

Replies that are neither Yes nor No are not dropped: they score 0.5, as the paper says, and
are counted (and a few kept as examples) in the stage's diagnostics. Any LLM backend works
(hf, vLLM, an OpenAI-compatible server, any LangChain chat model); every call goes through
the call cache.

A small model may not follow the reply format at all (the embedded 135M model answers "No"
to everything). The format-free reading is also stored: with a white-box backend, the
first reply token's top-K log-probabilities give P(Yes) and P(No), and the variant
``prompt_pno`` scores x_i^n = P(No) / (P(Yes) + P(No)) (0.5 when neither is in the top-K;
counted). It is this project's addition, labelled as such, in the spirit of P(True).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hallulab.core.token_stats import yes_no_probability
from hallulab.data.schema import Record
from hallulab.llm.base import DecodingParams
from hallulab.llm.cached import CachedLLM
from hallulab.llm.prompts import PromptTemplate
from hallulab.methods.sample_scores import sentence_sample_grid, unflatten
from hallulab.methods.selfcheck_prompt.knobs import SelfCheckPromptKnobs

PAPER_TEMPLATE = (
    "Context: {context}\n\nSentence: {sentence}\n\n"
    "Is the sentence supported by the context above? Answer Yes or No.\n\nAnswer: "
)
VERDICTS = {"yes": 0.0, "no": 1.0}
OTHER = 0.5


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


@dataclass(frozen=True)
class PromptMatrices:
    """The two I x N_max matrices of every passage: verdict scores (0 / 0.5 / 1, the paper) and
    P(No) / (P(Yes) + P(No)) (the format-free reading; None without a white-box backend)."""

    verdicts: dict[str, np.ndarray]
    probabilities: dict[str, np.ndarray] | None
    counts: PromptVerdicts
    probability_missing: int


def record_matrices(
    records: Sequence[Record], llm: CachedLLM, config: SelfCheckPromptKnobs, template: PromptTemplate
) -> PromptMatrices:
    """Every passage's matrices, all prompts of the data set in one cached request (sent in
    length order, so batches pad little)."""
    sentences, samples = sentence_sample_grid(records, "SelfCheck-Prompt")
    messages = [
        template.messages(context=sample.replace("\n", " "), sentence=sentence)
        for sentence, sample in zip(sentences, samples, strict=True)
    ]
    keys = [json.dumps(m, ensure_ascii=False) for m in messages]
    unique = sorted(dict.fromkeys(keys), key=len)
    by_key = dict(zip(keys, messages, strict=True))
    white_box = config.top_k > 0 and llm.capabilities.top_k_alternatives
    params = DecodingParams(
        max_new_tokens=config.max_new_tokens, temperature=0.0, top_k_alternatives=config.top_k if white_box else 0
    )
    generations = dict(zip(unique, llm.generate([by_key[k] for k in unique], params), strict=True))
    verdicts = PromptVerdicts()
    flat = np.empty(len(keys), dtype=np.float64)
    probabilities = np.empty(len(keys), dtype=np.float64)
    missing = 0
    for index, key in enumerate(keys):
        reply = generations[key]
        score, kind = parse_verdict(reply.text)
        flat[index] = score
        verdicts.counts[kind] += 1
        if kind == "other" and len(verdicts.other_examples) < 10:
            verdicts.other_examples.append(reply.text)
        probability = yes_no_probability(reply.tokens) if white_box else None
        if probability is None:
            missing += 1
            probability = OTHER
        probabilities[index] = probability
    return PromptMatrices(
        verdicts=unflatten(records, flat),
        probabilities=unflatten(records, probabilities) if white_box else None,
        counts=verdicts,
        probability_missing=missing if white_box else 0,
    )
