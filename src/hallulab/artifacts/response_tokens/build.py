"""Build the token-statistics artifact: generator tokens where the pipeline wrote the
response, teacher forcing through the proxy LLM otherwise."""

from __future__ import annotations

from typing import Any

from hallulab.artifacts.response_tokens.knobs import ResponseTokensKnobs
from hallulab.core.config import ConfigError
from hallulab.core.errors import RecordError
from hallulab.data.schema import Record
from hallulab.llm.base import ContextLengthError, Prompt
from hallulab.pipeline.context import BuildContext


def prefix_for(template: str, record: Record) -> Prompt:
    """The teacher-forcing prefix of one record: exactly ``{prompt}`` means the record's prompt
    as a user turn (the chat template then opens the assistant turn the response fills);
    another template with ``{prompt}`` is formatted as plain text; a record without a prompt
    gets the start token only."""
    if "{prompt}" not in template:
        return template
    if not record.prompt:
        return ""
    if template == "{prompt}":
        return [{"role": "user", "content": record.prompt}]
    return template.replace("{prompt}", record.prompt)


def _first_k(token: dict[str, Any], k: int) -> dict[str, Any]:
    """A stored token with its first K alternatives (and their ids, where the backend gave them)."""
    kept = dict(token, top=token.get("top", [])[:k])
    if "top_ids" in token:
        kept["top_ids"] = token["top_ids"][:k]
    return kept


def build(ctx: BuildContext) -> dict[str, Any]:
    cfg = ctx.params.typed(ResponseTokensKnobs, "response_tokens")
    generated = {row["id"]: row for row in ctx.artifacts.get("main_tokens", [])}
    records = [p for p in ctx.records if p.response is not None]
    sources: dict[str, str] = {}
    tokens: dict[str, list[dict[str, Any]]] = {}
    external = []
    for record in records:
        row = generated.get(record.id)
        if row is not None and row.get("text") == record.response:
            stored = max((len(t.get("top", [])) for t in row["tokens"]), default=0)
            if row["tokens"] and stored < cfg.top_k:
                raise ConfigError(
                    f"response_tokens.top_k: K_max={cfg.top_k} asked for, but the generator stored {stored} "
                    f"alternatives per token for record {record.id!r}; set generate.top_k_alternatives "
                    "(response_tokens.top_k follows it)"
                )
            sources[record.id] = "generator"
            tokens[record.id] = [_first_k(t, cfg.top_k) for t in row["tokens"]]
        else:
            external.append(record)
    identity: dict[str, Any] = {}
    if external:
        llm = ctx.resources.llm("proxy")
        if not llm.capabilities.teacher_forcing:
            raise ConfigError(
                f"llms.proxy ({ctx.resources.llm_name('proxy')}) cannot teacher-force text; "
                "choose a white-box backend (hf, vllm, or a vLLM server)"
            )
        identity = llm.llm.identity().as_key()
        prefixes = [prefix_for(cfg.prefix, p) for p in external]
        try:
            scored = llm.score(prefixes, [p.response or "" for p in external], top_k=cfg.top_k)
        except ContextLengthError as error:
            length = dict(zip(error.continuations, error.lengths, strict=True))
            over = [p for p in external if (p.response or "") in length]
            named = ", ".join(f"{p.id!r} ({length[p.response or '']} positions)" for p in over)
            raise RecordError(
                over[0].id if over else "?",
                "response",
                f"prefix + response exceed llms.proxy's context of {error.limit} positions; records: {named} "
                "(shorten them, or choose a proxy with a longer context)",
            ) from error
        for record, stats in zip(external, scored, strict=True):
            sources[record.id] = "proxy"
            tokens[record.id] = [t.to_dict() for t in stats]
    ctx.log.info(
        "%d responses: %d from the generator, %d teacher-forced through the proxy LLM",
        len(records),
        len(records) - len(external),
        len(external),
    )
    return {"top_k": cfg.top_k, "prefix": cfg.prefix, "llm": identity, "sources": sources, "tokens": tokens}
