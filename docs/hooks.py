"""MkDocs hooks (``hooks:`` in mkdocs.yml): the generated parts of the reference pages.

A page asks for a generated part with a marker line, which the build replaces:

* ``<!-- generated: cli -->``: ``hallulab --help`` and every subcommand's ``--help``, from the
  parsers of :mod:`hallulab.cli` (``command_parsers``);
* ``<!-- generated: config -->``: every knob section's class (its keys, defaults, allowed values
  and docs, which ``conf/config.yaml`` composes first), then ``conf/config.yaml``'s own keys,
  then every config group of ``conf/`` (a folder of options, ``conf/<group>/<option>.yaml``)
  with how the defaults list picks it, its options, and each option's keys with their default
  value and the comment written beside or above them.

Both are rendered at build time from the code and the configuration, so there is nothing to
keep in step by hand. An unknown marker fails the build.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from mkdocs.exceptions import PluginError

MARKER = re.compile(r"^<!-- generated: *(?P<name>[\w-]+) *-->$", re.MULTILINE)
#: the width argparse formats the help to (it reads COLUMNS), so that the page is the same
#: whatever terminal builds it
HELP_COLUMNS = "100"
#: folders of conf/ that hold YAML but are not config groups: files that params keys name
NOT_GROUPS = {"prompts": "prompt templates, each named by a params key (e.g. `selfcheck_prompt.prompt`)"}


# --- the CLI ---------------------------------------------------------------------------------


def cli_reference() -> str:
    """One section per command: its ``--help`` as the command prints it."""
    from hallulab.cli import command_parsers

    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        sections = []
        for path, parser in command_parsers().items():
            command = " ".join(("hallulab", *path))
            usage = parser.format_help().rstrip()
            sections.append(f"## `{command}`\n\n`{command} --help`:\n\n```text\n{usage}\n```\n")
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before
    return "\n".join(sections)


# --- the configuration -----------------------------------------------------------------------


def _prose(text: str) -> str:
    """A comment as Markdown: angle brackets outside code spans written as entities
    (``conf/prompts/<name>.yaml`` is not an HTML tag)."""
    parts = re.split(r"(`[^`]*`)", text)
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;")
    return "".join(parts)


def _cell(text: str) -> str:
    """Markdown as a table cell: its pipes escaped."""
    return text.replace("|", "\\|")


def _value(value: Any) -> str:
    """A default as YAML writes it inline, in a code element of the table."""
    if isinstance(value, str):
        text = value if value else '""'
    else:
        text = yaml.safe_dump(value, default_flow_style=True, width=1_000_000, sort_keys=False).strip()
        text = text.removesuffix("\n...").removesuffix("...").strip()
    return "<code>" + html.escape(text).replace("|", "&#124;") + "</code>"


def _comment_text(lines: list[str]) -> str:
    """Comment lines as one paragraph of Markdown; a line indented after its ``#`` (an item of a
    list in the comment) starts a new line."""
    pieces: list[str] = []
    for line in lines:
        body = line.strip().removeprefix("#")
        if body.startswith("  ") and pieces:
            pieces.append(body.strip())
        elif pieces:
            pieces[-1] += " " + body.strip()
        else:
            pieces.append(body.strip())
    return "<br>".join(_prose(piece) for piece in pieces)


class _Source:
    """One YAML file's lines and comments: the header (the comment lines before the first key),
    and for a line the comment on it and the comment lines directly above it."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        first = next((i for i, line in enumerate(self.lines) if line.strip() and not _is_comment(line)), 0)
        self.body_start = first
        self.header = [line for line in self.lines[:first] if _is_comment(line) and "@package" not in line]

    def comment(self, line: int) -> str:
        above: list[str] = []
        i = line - 1
        while i >= self.body_start and _is_comment(self.lines[i]):
            above.insert(0, self.lines[i])
            i -= 1
        inline = _inline_comment(self.lines[line])
        return _comment_text([*above, *([inline] if inline else [])])


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _inline_comment(line: str) -> str | None:
    """The ``# ...`` after a value on a line, outside quotes."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[i:]
    return None


def _keys(node: yaml.Node, prefix: str) -> Iterator[tuple[str, yaml.Node, int]]:
    """Every key of a mapping node, depth first: (dotted path, value node, line of the key)."""
    if not isinstance(node, yaml.MappingNode):
        return
    for key, value in node.value:
        path = f"{prefix}.{key.value}" if prefix else str(key.value)
        yield path, value, key.start_mark.line
        yield from _keys(value, path)


def _values(text: str) -> Any:
    """A file's values as OmegaConf reads them (its float rule reads ``1e-4`` as a number), as
    plain containers with interpolations left as written. The node tree that gives each key's
    line is composed by PyYAML's safe loader: its nodes and lines are OmegaConf's, only a plain
    scalar's tag (which the tables do not use) may differ."""
    from omegaconf import OmegaConf

    return OmegaConf.to_container(OmegaConf.create(text), resolve=False)


def _lookup(data: Any, path: str) -> Any:
    for part in path.split("."):
        data = data[part]
    return data


def _keys_table(text: str, prefix: str, skip: tuple[str, ...] = ("defaults",)) -> list[str]:
    """The table of an option's keys: each leaf with its default and comment, and a mapping key
    that has a comment of its own."""
    source = _Source(text)
    data = _values(text)
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    rows = []
    for path, node, line in _keys(root, ""):
        if path.split(".")[0] in skip:
            continue
        comment = source.comment(line)
        if isinstance(node, yaml.MappingNode):
            if comment:
                rows.append(f"| `{prefix}{path}` | | {_cell(comment)} |")
            continue
        rows.append(f"| `{prefix}{path}` | {_value(_lookup(data, path))} | {_cell(comment)} |")
    if not rows:
        return ["No keys of its own."]
    return ["| key | default | comment |", "|---|---|---|", *rows]


def _defaults(text: str) -> list[tuple[str, Any, str]]:
    """A file's defaults list: (group or group@package, option(s), the comment on the line)."""
    source = _Source(text)
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    data = _values(text)
    entries: list[tuple[str, Any, str]] = []
    if not isinstance(root, yaml.MappingNode):
        return entries
    for key, value in root.value:
        if key.value != "defaults" or not isinstance(value, yaml.SequenceNode):
            continue
        for item, parsed in zip(value.value, data["defaults"], strict=True):
            if isinstance(parsed, dict):
                ((group, option),) = parsed.items()
                comment = _inline_comment(source.lines[item.start_mark.line]) or ""
                entries.append((str(group), option, _comment_text([comment]) if comment else ""))
    return entries


def _group_intro(group: str, defaults: list[tuple[str, Any, str]]) -> str:
    chosen = [(name, option, comment) for name, option, comment in defaults if name.split("@")[0] == group]
    if not chosen:
        return f"Not in `conf/config.yaml`'s defaults: a data set or profile selects it (`-S {group}=<option>`)."
    name, option, comment = chosen[0]
    if "@" in name:
        package = name.split("@", 1)[1].rsplit(".", 1)[0]
        listed = ", ".join(f"`{o}`" for _, o, _ in chosen)
        return (
            f"Every option is composed, each as one entry of `{package}` (`{package}.<option>`): {listed}. "
            "A role or setting names an entry by its option name."
        )
    if isinstance(option, list):
        listed = ", ".join(f"`{o}`" for o in option)
        return f"Every option listed in `conf/config.yaml`'s defaults is composed: {listed}."
    note = f" ({comment})" if comment else ""
    return f"One option, chosen with `-S {group}=<option>`; the default is `{option}`{note}."


def _package(text: str, group: str, option: str, defaults: list[tuple[str, Any, str]]) -> str:
    """The prefix of an option's keys in the composed config."""
    if any(line.strip() == "# @package _global_" for line in text.splitlines()):
        return ""
    mounted = [name for name, _, _ in defaults if name.split("@")[0] == group and "@" in name]
    if mounted:
        return mounted[0].split("@", 1)[1].rsplit(".", 1)[0] + f".{option}."
    return f"{group}."


def _knob_default(field: Any) -> Any:
    import dataclasses

    from hallulab.pipeline.settings_schema import plain_default

    if field.default is not dataclasses.MISSING:
        return plain_default(field.default)
    if field.default_factory is not dataclasses.MISSING:
        return plain_default(field.default_factory())
    return "???"


def knob_reference() -> list[str]:
    """One table per knob section: each field of its class with its default, the values it
    allows and its doc (the schema ``conf/config.yaml`` names first, so the files below state
    only what differs)."""
    import dataclasses

    from hallulab.pipeline.settings_schema import knob_sections

    out = [
        "## Knob sections",
        "",
        "Each section below is a knob class: its fields are the section's keys, its defaults the",
        "values every composition starts from (`conf/config.yaml` names each class's schema first in",
        "its defaults list); the files under `conf/` state only what differs (a profile's value, a",
        "data set's). Ranges and allowed values are checked when a step reads its section.",
        "",
    ]
    for section, (cls, knob) in knob_sections().items():
        summary = (cls.__doc__ or "").strip().split("\n\n")[0]
        out += [f"### {section}", "", f"`{cls.__module__}.{cls.__name__}`: {_prose(' '.join(summary.split()))}", ""]
        out += ["| key | default | allowed | doc |", "|---|---|---|---|"]
        for field in dataclasses.fields(cls):
            if not field.init:
                continue
            meta = field.metadata
            allowed = []
            if meta.get("choices"):
                allowed.append(", ".join(f"`{c}`" for c in meta["choices"]))
            for name, sign in (("minimum", ">="), ("above", ">"), ("maximum", "<=")):
                if meta.get(name) is not None:
                    allowed.append(f"{sign} {meta[name]}")
            doc = _cell(meta.get("doc", ""))
            out.append(f"| `{section}.{field.name}` | {_value(_knob_default(field))} | {'; '.join(allowed)} | {doc} |")
        if knob.elsewhere:
            out += [
                "",
                "Read elsewhere (set in its conf file): " + ", ".join(f"`{section}.{k}`" for k in knob.elsewhere),
            ]
        out.append("")
    return out


def config_reference(conf: Path) -> str:
    """Every knob section's class, then the root config's own keys, then every group: its
    options and their keys."""
    root_text = (conf / "config.yaml").read_text(encoding="utf-8")
    defaults = _defaults(root_text)
    out = [
        *knob_reference(),
        "## Root settings",
        "",
        "`conf/config.yaml`'s own keys (the defaults list above them picks the groups' options).",
        "",
        *_keys_table(root_text, ""),
        "",
    ]
    groups = sorted(p for p in conf.iterdir() if p.is_dir() and any(p.glob("*.yaml")))
    for folder in groups:
        group = folder.name
        if group in NOT_GROUPS:
            continue
        out += [f"## {group}", "", _group_intro(group, defaults), ""]
        for path in sorted(folder.glob("*.yaml")):
            text = path.read_text(encoding="utf-8")
            source = _Source(text)
            option = path.stem
            out += [f"### {group}: {option}", "", f"`conf/{group}/{path.name}`"]
            if source.header:
                out += ["", _comment_text(source.header)]
            selects = [f"`{name.removeprefix('override ').lstrip('/')}={value}`" for name, value, _ in _defaults(text)]
            if selects:
                out += ["", "Selects " + ", ".join(selects) + "."]
            out += ["", *_keys_table(text, _package(text, group, option, defaults)), ""]
    values = sorted((conf / "profile_values").glob("*/*.yaml"))
    if values:
        out += [
            "## profile_values",
            "",
            "The values a profile gives a section's knobs, composed for the selected profile",
            "(`conf/profile_values/<section>/<profile>.yaml`, package `<section>`); a knob no file sets",
            "keeps its class's default, the paper's value.",
            "",
        ]
        for path in values:
            text = path.read_text(encoding="utf-8")
            section, profile = path.parent.name, path.stem
            out += [f"### {section}: {profile}", "", f"`conf/profile_values/{section}/{path.name}`"]
            header = _Source(text).header
            if header:
                out += ["", _comment_text(header)]
            out += ["", *_keys_table(text, f"{section}."), ""]
    for group, what in NOT_GROUPS.items():
        names = ", ".join(f"`{p.stem}`" for p in sorted((conf / group).glob("*.yaml")))
        out += [f"## {group}", "", f"`conf/{group}/`: {what}: {names}.", ""]
    return "\n".join(out)


# --- the hook --------------------------------------------------------------------------------


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace each marker line with the part it names."""
    conf = Path(config["config_file_path"]).parent / "conf"

    def generated(match: re.Match[str]) -> str:
        name = match["name"]
        if name == "cli":
            return cli_reference()
        if name == "config":
            return config_reference(conf)
        raise PluginError(f"{page.file.src_path}: unknown generated part {name!r} (cli or config)")

    return MARKER.sub(generated, markdown)
