"""Prompts are data: LangChain chat templates loaded from YAML files under ``conf/prompts/``.

A prompt file holds a system message (optional), few-shot examples (optional, literal
human / AI turns) and the human template with ``{placeholders}`` (LangChain's f-string
format: a literal brace is written ``{{`` / ``}}``)::

    name: selfcheck_prompt
    source: selfcheckgpt 0.1.7, SelfCheckLLMPrompt
    system: null
    examples:
      - human: "..."
        ai: "..."
    human: "Context: {context}\\n\\nSentence: {sentence}\\n\\n..."

The stages that render a prompt list its file as a DVC dependency, so editing a prompt
re-runs exactly those stages. Rendering gives chat messages (``[{"role", "content"}]``),
which every backend accepts (the ``hf`` backend applies the model's chat template, an
OpenAI-compatible server and any LangChain chat model take them as they are); the rendered
messages are part of every call's cache key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from hallulab.core.config import CONF_DIR, ConfigError
from hallulab.core.yaml_files import safe_read

PROMPTS_DIR = CONF_DIR / "prompts"
ROLE_NAMES = {"system": "system", "human": "user", "ai": "assistant"}


@dataclass(frozen=True)
class FewShotExample:
    human: str
    ai: str


@dataclass(frozen=True)
class PromptTemplate:
    """One prompt file (see the module docstring)."""

    name: str
    human: str
    system: str | None = None
    examples: tuple[FewShotExample, ...] = ()
    source: str = ""

    @cached_property
    def template(self) -> Any:
        """The LangChain ``ChatPromptTemplate``: system, the examples as literal turns, human."""
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
        from langchain_core.prompts import ChatPromptTemplate

        parts: list[Any] = []
        if self.system:
            parts.append(SystemMessage(content=self.system))
        for example in self.examples:
            parts.extend([HumanMessage(content=example.human), AIMessage(content=example.ai)])
        parts.append(("human", self.human))
        return ChatPromptTemplate.from_messages(parts)

    @property
    def identity(self) -> dict[str, Any]:
        """What the prompt renders from (for cache keys of derived results)."""
        return {
            "system": self.system,
            "examples": [[e.human, e.ai] for e in self.examples],
            "human": self.human,
        }

    @property
    def variables(self) -> list[str]:
        return sorted(self.template.input_variables)

    def messages(self, **values: str) -> list[dict[str, str]]:
        """The rendered chat messages for one set of placeholder values."""
        missing = [v for v in self.variables if v not in values]
        if missing:
            raise ConfigError(f"prompt {self.name!r}: no value for placeholder(s) {missing}")
        rendered = self.template.format_messages(**{k: v for k, v in values.items() if k in self.variables})
        return [{"role": ROLE_NAMES.get(m.type, m.type), "content": str(m.content)} for m in rendered]

    def render_many(self, rows: Sequence[Mapping[str, str]]) -> list[list[dict[str, str]]]:
        return [self.messages(**dict(row)) for row in rows]


def prompt_path(name: str) -> Path:
    return PROMPTS_DIR / f"{name}.yaml"


def parse_prompt(raw: Mapping[str, Any], where: str) -> PromptTemplate:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected a mapping with 'human' (and optional 'system', 'examples')")
    human = raw.get("human")
    if not isinstance(human, str) or not human.strip():
        raise ConfigError(f"{where}: 'human' (the template of the user turn) is missing or empty")
    system = raw.get("system")
    if system is not None and not isinstance(system, str):
        raise ConfigError(f"{where}: 'system' must be a string or null")
    examples = []
    for i, item in enumerate(raw.get("examples") or []):
        if (
            not isinstance(item, Mapping)
            or not isinstance(item.get("human"), str)
            or not isinstance(item.get("ai"), str)
        ):
            raise ConfigError(f"{where}: examples[{i}] needs string 'human' and 'ai' fields")
        examples.append(FewShotExample(item["human"], item["ai"]))
    return PromptTemplate(
        name=str(raw.get("name", where)),
        human=human,
        system=system,
        examples=tuple(examples),
        source=str(raw.get("source", "")),
    )


def load_prompt(name: str) -> PromptTemplate:
    """``conf/prompts/<name>.yaml`` (or a path to a YAML file)."""
    path = Path(name) if name.endswith((".yaml", ".yml")) else prompt_path(name)
    if not path.is_file():
        known = sorted(p.stem for p in PROMPTS_DIR.glob("*.yaml"))
        raise ConfigError(f"prompt file {path} not found; prompts in conf/prompts: {known}")
    raw = safe_read(path.read_text(encoding="utf-8"))
    template = parse_prompt(raw, str(path))
    try:
        template.template  # noqa: B018 - parse the placeholders now, naming the file on error
    except Exception as error:  # langchain raises several types for a malformed template
        raise ConfigError(f"{path}: not a valid LangChain template ({error})") from error
    return template
