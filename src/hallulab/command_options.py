"""Options the ``hallulab`` subcommands spell alike (``hallulab.cli`` and ``hallulab.plan``
build their parsers with them, so neither imports the other)."""

from __future__ import annotations

import argparse

#: the output option's earlier spelling (``plan`` and ``nli train``), still accepted
OUTPUT_ALIAS = "--out"


def add_output_option(parser: argparse.ArgumentParser, help: str, default: str | None = None) -> None:
    """Every subcommand's output option, ``-o/--output`` (``args.output``); ``--out``, the
    spelling ``plan`` and ``nli train`` once took, is still accepted and left out of the help."""
    parser.add_argument("-o", "--output", default=default, help=help)
    parser.add_argument(OUTPUT_ALIAS, dest="output", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def add_setting_option(parser: argparse.ArgumentParser, help: str) -> None:
    """A subcommand's ``-S/--set KEY=VALUE`` (repeatable, ``args.set``), as ``dvc exp run -S``
    takes it; ``help`` says what the subcommand does with one."""
    parser.add_argument("-S", "--set", action="append", default=[], metavar="KEY=VALUE", help=help)
