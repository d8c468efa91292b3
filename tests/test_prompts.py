"""Prompt files are LangChain chat templates: system, few-shot turns, human template."""

from __future__ import annotations

from pathlib import Path

import pytest

from hallulab.core.config import ConfigError
from hallulab.llm.prompts import PROMPTS_DIR, load_prompt


def test_every_prompt_file_parses_and_renders() -> None:
    for path in sorted(PROMPTS_DIR.glob("*.yaml")):
        template = load_prompt(path.stem)
        messages = template.messages(**dict.fromkeys(template.variables, "X"))
        assert messages[-1]["role"] == "user" and messages[-1]["content"], path


def test_few_shot_examples_become_literal_turns_and_braces_in_values_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "judge.yaml"
    path.write_text(
        "name: judge\nsystem: Answer yes or no.\n"
        "examples:\n  - human: 'Fact: {a} is a set'\n    ai: 'yes'\n"
        "human: 'Fact: {fact}'\n"
    )
    template = load_prompt(str(path))
    assert template.variables == ["fact"]  # the example's braces are literal text, not a placeholder
    messages = template.messages(fact="x = {1, 2}")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[1]["content"] == "Fact: {a} is a set" and messages[3]["content"] == "Fact: x = {1, 2}"


def test_bad_prompt_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_prompt("no_such_prompt")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nhuman: ''\n")
    with pytest.raises(ConfigError, match="'human'"):
        load_prompt(str(bad))
    with pytest.raises(ConfigError, match="placeholder"):
        load_prompt("selfcheck_prompt").messages(context="only one of two")
