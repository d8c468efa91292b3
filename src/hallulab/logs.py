"""Stage logging: one format for every stage, to stderr (DVC shows it)."""

from __future__ import annotations

import logging


def stage_logger(name: str) -> logging.Logger:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    return logging.getLogger(f"hallulab.{name}")
