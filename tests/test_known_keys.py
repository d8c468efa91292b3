"""The key tree of conf/: every shipped composition passes, an added key is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from hallulab.core.config import ConfigError, compose
from hallulab.pipeline.known_keys import check_known, known_tree, unknown_keys
from hallulab.pipeline.settings_schema import all_section_fields

DATASETS = ["toy", "wikibio", "nq_open", "hotpotqa", "concept7", "factualbio", "jsonl"]


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("profile", ["paper", "quick"])
def test_every_shipped_composition_is_known(dataset: str, profile: str) -> None:
    params = compose([f"dataset={dataset}", f"profile={profile}"])
    assert unknown_keys(params, list(params), known_tree(), all_section_fields()) == []


def test_a_user_named_catalogue_entry_is_known_and_its_keys_are_checked() -> None:
    params = compose(["+llm@llm_catalogue.mine=vllm_server", "llms.evaluator=mine"])
    assert unknown_keys(params, list(params), known_tree(), all_section_fields()) == []
    params["llm_catalogue"]["mine"]["temprature"] = 0.2
    assert unknown_keys(params, ["llm_catalogue"], known_tree())[0][0] == "llm_catalogue.mine.temprature"


def test_an_added_key_is_refused_naming_it_and_its_neighbours() -> None:
    params = compose(["+samples.temperature=0.5", "+ccp.aggregate.kk=3"])
    problems = dict(unknown_keys(params, list(params), known_tree(), all_section_fields()))
    assert set(problems) == {"samples.temperature", "ccp.aggregate.kk"}
    assert "used" in problems["samples.temperature"]
    with pytest.raises(ConfigError, match=r"samples\.temperature: no config .* \(and 1 more\)"):
        check_known(params, list(params), fields=all_section_fields())


def test_values_below_a_leaf_are_not_settings() -> None:
    params = compose(["dataset=nq_open"])
    params["dataset"]["limit"] = 3  # a leaf: what it holds is a value
    assert unknown_keys(params, list(params), known_tree(), all_section_fields()) == []


def test_a_stage_checks_the_knob_sections_it_reads_against_their_classes_alone(tmp_path: Path) -> None:
    """A stage's view imports only the classes of the knob sections it declares: an added key in
    one of them is refused, in a section it does not read it is its reader's to refuse."""
    from hallulab.core.config import write_params
    from hallulab.pipeline.params import ParamsView

    write_params(tmp_path / "params.yaml", ["+samples.temperature=0.5"])
    with pytest.raises(ConfigError, match=r"^samples\.temperature: no config .*known here: \["):
        ParamsView.load(str(tmp_path / "params.yaml"), ["samples.used"], "aggregate_selfcheck_ngram")
    ParamsView.load(str(tmp_path / "params.yaml"), ["ccp.aggregate"], "aggregate_ccp")
