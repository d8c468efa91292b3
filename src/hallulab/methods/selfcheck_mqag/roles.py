"""The four MQAG roles (SelfCheckGPT Appendix B): G1 question + answer generation, G2
distractor generation, A multiple-choice answering, U answerability.

Two implementations of :class:`MQAGRoles`:

* :class:`LLMRoles` - an offline **substitute**: every role is a prompt (files
  ``conf/prompts/mqag_*.yaml``) to the ``qa`` LLM role (any backend with top-K
  log-probabilities: hf, vLLM, an OpenAI-compatible server).
  G1 is sampled (temperature 1, seeded per question, as the paper samples its T5); G2 is
  greedy; A reads the distribution over the option letters A-D and U the ratio
  P(Yes) / (P(Yes) + P(No)) from the first answer token's top-K log-probabilities. It is
  not the paper's system and results are labelled with the LLM used.
* :class:`HubRoles` - the paper's models by hub id (potsawee T5-large G1/G2, Longformer-large
  A/U), driven through the released selfcheckgpt helpers; needs the network once.

Parsing rules for the substitute (each failure is counted, never silently dropped): a G1
reply must contain "Question: ..." and "Answer: ..." lines, otherwise the question is
skipped (as the reference skips a T5 output without exactly one separator); G2 keeps up to
three distinct lines that differ from the answer and pads with the last option when fewer
come back (as the reference does). Options are shuffled per question with a seeded RNG (an
LLM answerer is biased to the first position; the reference always puts the answer first).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np

from hallulab.core.config import ConfigError
from hallulab.core.token_stats import TokenStats
from hallulab.llm.base import DecodingParams
from hallulab.llm.cached import CachedLLM
from hallulab.llm.prompts import PromptTemplate
from hallulab.methods.selfcheck_mqag.protocol import GeneratedQuestion, RoleCounts

LETTERS = ("A", "B", "C", "D")

_QA = re.compile(r"question\s*[:\-]\s*(?P<q>.+?)\s*(?:\n|\s)answer\s*[:\-]\s*(?P<a>[^\n]+)", re.I | re.S)
_LIST_MARK = re.compile(r"^\s*(?:[-*\u2022]|\(?\d+[.)]|[a-dA-D][.)])\s*")


def parse_question(reply: str) -> tuple[str, str] | None:
    match = _QA.search(reply)
    if not match:
        return None
    question = match.group("q").strip().splitlines()[0].strip()
    answer = match.group("a").strip()
    return (question, answer) if question and answer else None


def parse_distractors(reply: str, answer: str) -> list[str]:
    seen: list[str] = []
    for line in reply.splitlines():
        option = _LIST_MARK.sub("", line).strip()
        if option and option.lower() != answer.lower() and option.lower() not in {s.lower() for s in seen}:
            seen.append(option)
    return seen[:3]


def shuffled_options(answer: str, distractors: Sequence[str], seed: int) -> tuple[tuple[str, ...], int]:
    """[answer] + distractors padded to 4 with the last option (as the reference), shuffled."""
    options = [answer, *distractors]
    while len(options) < len(LETTERS):
        options.append(options[-1])
    order = np.random.default_rng(seed).permutation(len(options))
    shuffled = tuple(options[i] for i in order)
    return shuffled, int(np.where(order == 0)[0][0])


def first_token_distribution(tokens: Sequence[TokenStats], labels: Sequence[str]) -> np.ndarray | None:
    """Distribution over ``labels`` from the first generated token's top-K log-probs
    (case-insensitive, stripped of spaces and punctuation); None when none is in the top-K."""
    if not tokens:
        return None
    grouped: dict[str, list[float]] = {label.lower(): [] for label in labels}
    first = tokens[0]
    candidates = first.top or ((first.token, first.logprob),)
    for token, logprob in candidates:
        key = token.strip().strip(".:)(").lower()
        if key in grouped:
            grouped[key].append(logprob)
    present = {k: float(np.logaddexp.reduce(v)) for k, v in grouped.items() if v}
    if not present:
        return None
    top = max(present.values())
    weights = np.asarray([math.exp(present[k] - top) if k in present else 0.0 for k in grouped])
    return weights / weights.sum()


ROLE_PROMPTS = ("g1", "g2", "answer", "answerability")


class LLMRoles:
    """All four roles as prompts to one LLM (the offline substitute). Every prompt is a call of
    the cached LLM, so the call cache keeps and counts each one: no second cache over A and U."""

    answer_call_label: str | None = None

    def __init__(
        self,
        llm: CachedLLM,
        prompts: dict[str, PromptTemplate],
        *,
        top_k: int = 20,
        question_temperature: float = 1.0,
    ) -> None:
        if not llm.capabilities.top_k_alternatives:
            raise ConfigError(
                "llms.qa: the MQAG LLM substitute needs top-K log-probabilities; choose an entry that gives them"
            )
        missing = [role for role in ROLE_PROMPTS if role not in prompts]
        if missing:
            raise ConfigError(f"selfcheck_mqag.prompts: no prompt for role(s) {missing}")
        self.llm = llm
        self.prompts = prompts
        self.top_k = top_k
        self.question_temperature = question_temperature
        self.counts = RoleCounts()

    @cached_property
    def identity(self) -> dict[str, Any]:
        return {
            "roles": "llm_substitute",
            "llm": self.llm.llm.identity().as_key(),
            "prompts": {role: self.prompts[role].identity for role in ROLE_PROMPTS},
            "top_k": self.top_k,
            "question_temperature": self.question_temperature,
        }

    def questions(
        self, sentences: Sequence[str], passages: Sequence[str], seeds: Sequence[int]
    ) -> list[GeneratedQuestion | None]:
        sampled = DecodingParams(max_new_tokens=64, temperature=self.question_temperature)
        replies = self.llm.generate([self.prompts["g1"].messages(sentence=s) for s in sentences], sampled, list(seeds))
        parsed = [parse_question(r.text) for r in replies]
        self.counts.add("g1_replies", len(parsed))
        self.counts.add("g1_unparsed_skipped", sum(p is None for p in parsed))
        valid = [(i, p) for i, p in enumerate(parsed) if p is not None]
        g2_prompts = [self.prompts["g2"].messages(passage=passages[i], question=q, answer=a) for i, (q, a) in valid]
        g2 = self.llm.generate(g2_prompts, DecodingParams(max_new_tokens=64, temperature=0.0))
        out: list[GeneratedQuestion | None] = [None] * len(sentences)
        for (i, (question, answer)), reply in zip(valid, g2, strict=True):
            distractors = parse_distractors(reply.text, answer)
            if len(distractors) < 3:
                self.counts.add("g2_padded_options")
            options, answer_index = shuffled_options(answer, distractors, seeds[i])
            out[i] = GeneratedQuestion(question, options, answer_index)
        return out

    def _first_tokens(self, prompts: list[list[dict[str, str]]]) -> list[Sequence[TokenStats]]:
        params = DecodingParams(max_new_tokens=1, temperature=0.0, top_k_alternatives=self.top_k)
        return [g.tokens for g in self.llm.generate(prompts, params)]

    def answer(self, questions: Sequence[GeneratedQuestion], contexts: Sequence[str]) -> np.ndarray:
        prompts = [
            self.prompts["answer"].messages(
                context=c.replace("\n", " "),
                question=q.question,
                options="\n".join(f"{letter}. {o}" for letter, o in zip(LETTERS, q.options, strict=True)),
            )
            for q, c in zip(questions, contexts, strict=True)
        ]
        out = np.empty((len(prompts), len(LETTERS)))
        for row, tokens in enumerate(self._first_tokens(prompts)):
            distribution = first_token_distribution(tokens, LETTERS)
            if distribution is None:
                self.counts.add("a_no_letter_uniform")
                distribution = np.full(len(LETTERS), 1 / len(LETTERS))
            out[row] = distribution
        return out

    def answerability(self, questions: Sequence[GeneratedQuestion], contexts: Sequence[str]) -> np.ndarray:
        prompts = [
            self.prompts["answerability"].messages(context=c.replace("\n", " "), question=q.question)
            for q, c in zip(questions, contexts, strict=True)
        ]
        out = np.empty(len(prompts))
        for row, tokens in enumerate(self._first_tokens(prompts)):
            distribution = first_token_distribution(tokens, ("yes", "no"))
            if distribution is None:
                self.counts.add("u_no_yes_no_half")
                out[row] = 0.5
            else:
                out[row] = float(distribution[0])
        return out


class HubRoles:
    """The paper's MQAG models (hub ids), through the released selfcheckgpt helpers. Their A
    and U calls are cached and counted under ``answer_call_label``."""

    answer_call_label: str | None = "MQAG Longformer (hub)"

    def __init__(self, g1: str, g2: str, answering: str, answerability: str, device: str = "cpu") -> None:
        self.names = {"g1": g1, "g2": g2, "answering": answering, "answerability": answerability}
        self.device = device
        self.counts = RoleCounts()

    @cached_property
    def identity(self) -> dict[str, Any]:
        return {"roles": "hub", **self.names}

    @cached_property
    def _models(self) -> dict[str, Any]:
        import transformers

        tok, seq2seq = transformers.AutoTokenizer, transformers.AutoModelForSeq2SeqLM
        loaded = {
            "g1": (tok.from_pretrained(self.names["g1"]), seq2seq.from_pretrained(self.names["g1"])),
            "g2": (tok.from_pretrained(self.names["g2"]), seq2seq.from_pretrained(self.names["g2"])),
            "a": (
                tok.from_pretrained(self.names["answering"]),
                transformers.LongformerForMultipleChoice.from_pretrained(self.names["answering"]),
            ),
            "u": (
                tok.from_pretrained(self.names["answerability"]),
                transformers.LongformerForSequenceClassification.from_pretrained(self.names["answerability"]),
            ),
        }
        for _, model in loaded.values():
            model.to(self.device).eval()
        return loaded

    def questions(
        self, sentences: Sequence[str], passages: Sequence[str], seeds: Sequence[int]
    ) -> list[GeneratedQuestion | None]:
        import torch
        from selfcheckgpt import modeling_mqag as mqag

        (g1_tok, g1), (g2_tok, g2) = self._models["g1"], self._models["g2"]
        out: list[GeneratedQuestion | None] = []
        for sentence, passage, seed in zip(sentences, passages, seeds, strict=True):
            torch.manual_seed(seed)
            with torch.inference_mode():
                made = mqag.question_generation_sentence_level(
                    g1, g1_tok, g2, g2_tok, sentence, passage, 1, self.device
                )
            self.counts.add("g1_replies")
            if not made:
                self.counts.add("g1_unparsed_skipped")
                out.append(None)
                continue
            out.append(GeneratedQuestion(made[0]["question"], tuple(made[0]["options"][:4]), 0))
        return out

    def answer(self, questions: Sequence[GeneratedQuestion], contexts: Sequence[str]) -> np.ndarray:
        import torch
        from selfcheckgpt import modeling_mqag as mqag

        tokenizer, model = self._models["a"]
        with torch.inference_mode():
            rows = [
                mqag.answering(model, tokenizer, q.question, list(q.options), c, 4096, self.device)
                for q, c in zip(questions, contexts, strict=True)
            ]
        return np.asarray(rows, dtype=np.float64).reshape(len(rows), len(LETTERS))

    def answerability(self, questions: Sequence[GeneratedQuestion], contexts: Sequence[str]) -> np.ndarray:
        import torch

        tokenizer, model = self._models["u"]
        out = []
        with torch.inference_mode():
            for question, context in zip(questions, contexts, strict=True):
                text = f"{question.question} {tokenizer.sep_token} {context}"
                encoded = tokenizer(text, max_length=4096, truncation=True, return_tensors="pt").to(self.device)
                out.append(float(torch.sigmoid(model(**encoded).logits.squeeze(-1)).item()))
        return np.asarray(out)
