"""Shared fixtures: the toy set, the WikiBio local copy, a throwaway cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hallulab.cache import default_cache_path
from hallulab.config import dataset_config
from hallulab.data.loaders import DATA_ROOT_ENV, load_dataset, load_jsonl_passages
from hallulab.data.schema import Passage
from tests.workspace import SHARED_DVC_CACHE_ENV

REPO = Path(__file__).resolve().parents[1]
TOY = REPO / "data" / "toy" / "passages.jsonl"
WIKIBIO_CFG = {**dataset_config("wikibio"), "source": "local"}


@pytest.fixture(autouse=True, scope="session")
def _isolated_call_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never touch the user's call cache: one fresh cache per test session (so the
    session measures cold runs), inherited by the DVC subprocesses. Converted model copies
    ($HALLULAB_MODEL_DIR, derived from the weights' hash) stay shared."""
    if "HALLULAB_CACHE_DIR" not in os.environ:
        os.environ["HALLULAB_MODEL_DIR"] = os.environ.get(
            "HALLULAB_MODEL_DIR", str(default_cache_path().parent / "models")
        )
        os.environ["HALLULAB_CACHE_DIR"] = str(tmp_path_factory.getbasetemp() / "call-cache")
    os.environ.setdefault(SHARED_DVC_CACHE_ENV, str(tmp_path_factory.getbasetemp() / "dvc-cache"))


@pytest.fixture(scope="session")
def toy_passages() -> list[Passage]:
    return load_jsonl_passages(TOY)


def wikibio_available() -> bool:
    root = os.environ.get(DATA_ROOT_ENV)
    return bool(root) and (Path(root) / str(WIKIBIO_CFG["local_file"])).is_file()


#: Skipped on a developer machine without the data; never skipped in CI (CI=true), where a
#: missing data root must fail loudly instead of passing by skipping the reproduction.
requires_wikibio = pytest.mark.skipif(
    not wikibio_available() and not os.environ.get("CI"),
    reason=f"set {DATA_ROOT_ENV} to the folder holding the WikiBio local copy",
)


@pytest.fixture(scope="session")
def wikibio_passages() -> list[Passage]:
    if not wikibio_available() and not os.environ.get("CI"):
        pytest.skip(f"{DATA_ROOT_ENV} not set")
    return load_dataset(WIKIBIO_CFG)[0]
