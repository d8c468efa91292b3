"""Concept-7 (Luo et al., 2023; Self-Familiarity): prompt-only records of test and basic
concepts with familiarity labels; ``generate`` writes each record's response and samples. The
reading itself is :mod:`hallulab.data.concept7`."""

from __future__ import annotations

from typing import Any

from hallulab.core.errors import RecordError
from hallulab.data.dataset_config import DatasetConfigError, DatasetKnobs
from hallulab.data.provision import Provision
from hallulab.data.root import needed_root
from hallulab.data.schema import Record
from hallulab.data.sets.spec import DatasetSpec


def load_concept7(cfg: DatasetKnobs) -> tuple[list[Record], dict[str, Any]]:
    """Concept-7 (Self-Familiarity): see :mod:`hallulab.data.concept7`."""
    from hallulab.data import concept7

    root = needed_root(SPEC.title, SPEC.source)
    try:
        return concept7.load_concept7(root, cfg)
    except (FileNotFoundError, ValueError) as error:
        if isinstance(error, RecordError):
            raise
        raise DatasetConfigError(f"dataset {cfg.name!r}: {error}") from error


def _root_files(cfg: DatasetKnobs) -> list[str]:
    from hallulab.data.concept7 import concept7_files

    return concept7_files(cfg)


SPEC = DatasetSpec(
    loader="concept7",
    title="Concept-7",
    load=load_concept7,
    # prompt-only records (generate writes the response and samples), familiarity labels
    provision=Provision(
        prompts=True, samples_in_data=False, sac3_outputs=False, labels=("prompt",), responses_in_data=False
    ),
    source="concept7",
    root_files=_root_files,
)
