"""The ``method`` defaults list of ``conf/config.yaml``, generated from the registered methods.

Hydra composes a method's params section only when the root config's defaults list names its
file, and Hydra has no glob there; so the list is written from what is registered: every
method package (:func:`hallulab.pipeline.registry.methods`, in listing order) that has a
``conf/method/<name>.yaml``. A file there without a method package is an error. ``make regen``
writes the list; ``python -m hallulab.dag.method_defaults --check`` (and the test suite) fails
when the committed file differs.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from hallulab.core.config import REPO_ROOT
from hallulab.pipeline import registry

CONFIG = REPO_ROOT / "conf" / "config.yaml"
METHOD_CONF = REPO_ROOT / "conf" / "method"
#: the ``  - method:`` entry and its item lines, as the root config writes them
BLOCK = re.compile(r"^(?P<head>  - method:\n)(?P<items>(?:      - [a-z0-9_]+.*\n)+)", re.MULTILINE)


def method_entries(conf_dir: Path = METHOD_CONF) -> list[str]:
    """The registered methods with a conf file, in listing order."""
    files = {path.stem for path in conf_dir.glob("*.yaml")}
    registered = registry.methods()
    stray = sorted(files - set(registered))
    if stray:
        raise ValueError(f"{conf_dir}: {stray} name no registered method (hallulab.methods.<name> with a SPEC)")
    return [name for name in registered if name in files]


def rendered(config_text: str, entries: list[str]) -> str:
    """``config_text`` with its method list replaced by ``entries``."""
    match = BLOCK.search(config_text)
    if match is None:
        raise ValueError("conf/config.yaml: no '  - method:' entry in the defaults list")
    items = "".join(f"      - {name}\n" for name in entries)
    return config_text[: match.start("items")] + items + config_text[match.end("items") :]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when conf/config.yaml differs; write nothing")
    args = parser.parse_args(argv)
    current = CONFIG.read_text()
    expected = rendered(current, method_entries())
    if expected == current:
        return 0
    if args.check:
        print("conf/config.yaml: the method defaults list differs from the registered methods; run `make regen`")
        return 1
    CONFIG.write_text(expected)
    print(f"wrote {CONFIG}: method defaults {method_entries()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
