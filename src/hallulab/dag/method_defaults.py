"""The generated parts of ``conf/config.yaml``'s defaults list: the knob schemas and the methods.

Hydra composes a section only when the root config's defaults list names it, and Hydra has no
glob there; so two parts of the list are written from what is registered:

* the schema of every knob section (:func:`hallulab.pipeline.settings_schema.knob_sections`, in
  its order), first, as ``- /schema/<section path>@<section>``: each section's keys, types and
  defaults, stored in Hydra's ConfigStore by the ``hydra_plugins.hallulab_schemas`` module in
  every process that composes, so that every file after them states only what differs;
* every method package (:func:`hallulab.pipeline.registry.methods`, in listing order) that has a
  ``conf/method/<name>.yaml``. A file there without a method package is an error;
* every section whose values a profile changes, last before the root's own keys, as
  ``- optional profile_values/<section>@<section>: ${profile}``: Hydra composes
  ``conf/profile_values/<section>/<the selected profile>.yaml`` over the section, so a knob's paper
  value is its class's default and a profile's other value is written once, in that file (a
  section the profile leaves alone has no file, and ``optional`` composes nothing).

``make regen`` writes both; ``python -m hallulab.dag.method_defaults --check`` (and the test
suite) fails when the committed file differs.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from hallulab.core.config import REPO_ROOT
from hallulab.pipeline import registry
from hallulab.pipeline.settings_schema import GROUP, knob_sections

CONFIG = REPO_ROOT / "conf" / "config.yaml"
METHOD_CONF = REPO_ROOT / "conf" / "method"
PROFILE_VALUES = REPO_ROOT / "conf" / "profile_values"
#: the ``  - method:`` entry and its item lines, as the root config writes them
BLOCK = re.compile(r"^(?P<head>  - method:\n)(?P<items>(?:      - [a-z0-9_]+.*\n)+)", re.MULTILINE)
#: the schema entries of the defaults list, one line each
SCHEMA_BLOCK = re.compile(rf"^(?:  - /{GROUP}/\S+@\S+\n)+", re.MULTILINE)


#: the profile-value entries of the defaults list, one line each
PROFILE_BLOCK = re.compile(r"^(?:  - optional profile_values/\S+: \$\{profile\}\n)+", re.MULTILINE)


def profile_entries(folder: Path = PROFILE_VALUES) -> list[str]:
    """``optional profile_values/<section>@<section>: ${profile}`` of every section with a folder
    of profile values, in name order."""
    sections = sorted(path.name for path in folder.iterdir() if path.is_dir() and any(path.glob("*.yaml")))
    return [f"optional profile_values/{section}@{section}: ${{profile}}" for section in sections]


def schema_entries() -> list[str]:
    """``/schema/<section path>@<section>`` of every knob section, in declaration order."""
    return [f"/{GROUP}/{section.replace('.', '/')}@{section}" for section in knob_sections()]


def method_entries(conf_dir: Path = METHOD_CONF) -> list[str]:
    """The registered methods with a conf file, in listing order."""
    files = {path.stem for path in conf_dir.glob("*.yaml")}
    registered = registry.methods()
    stray = sorted(files - set(registered))
    if stray:
        raise ValueError(f"{conf_dir}: {stray} name no registered method (hallulab.methods.<name> with a SPEC)")
    return [name for name in registered if name in files]


def rendered(
    config_text: str, entries: list[str], schemas: list[str] | None = None, profiles: list[str] | None = None
) -> str:
    """``config_text`` with its method list replaced by ``entries`` (and its schema and profile-value
    entries by ``schemas`` and ``profiles``, when given)."""
    match = BLOCK.search(config_text)
    if match is None:
        raise ValueError("conf/config.yaml: no '  - method:' entry in the defaults list")
    items = "".join(f"      - {name}\n" for name in entries)
    text = config_text[: match.start("items")] + items + config_text[match.end("items") :]
    if schemas is None:
        return text
    found = SCHEMA_BLOCK.search(text)
    if found is None:
        raise ValueError(f"conf/config.yaml: no '  - /{GROUP}/...' entries in the defaults list")
    text = text[: found.start()] + "".join(f"  - {entry}\n" for entry in schemas) + text[found.end() :]
    if profiles is None:
        return text
    found = PROFILE_BLOCK.search(text)
    if found is None:
        raise ValueError("conf/config.yaml: no '  - optional profile_values/...' entries in the defaults list")
    return text[: found.start()] + "".join(f"  - {entry}\n" for entry in profiles) + text[found.end() :]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when conf/config.yaml differs; write nothing")
    args = parser.parse_args(argv)
    current = CONFIG.read_text()
    expected = rendered(current, method_entries(), schema_entries(), profile_entries())
    if expected == current:
        return 0
    if args.check:
        print(
            "conf/config.yaml: the schema, method or profile-value defaults differ from the registered knob "
            "classes, the methods and conf/profile_values/; run `make regen`"
        )
        return 1
    CONFIG.write_text(expected)
    print(f"wrote {CONFIG}: {len(schema_entries())} schema entries, method defaults {method_entries()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
