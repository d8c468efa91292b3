"""params.yaml must be exactly what `dvc exp run` would compose from conf/ defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from hallulab.core.config import CONF_DIR, REPO_ROOT, compose, write_params
from hallulab.pipeline.params import ParamsView


def test_committed_params_equal_composed_conf_defaults(tmp_path: Path) -> None:
    composed = tmp_path / "params.yaml"
    write_params(composed)
    committed = REPO_ROOT / "params.yaml"
    assert yaml.safe_load(committed.read_text()) == yaml.safe_load(composed.read_text()), (
        "params.yaml differs from conf/ defaults: run `make params` and commit both"
    )
    assert committed.read_text() == composed.read_text()


def test_dataset_group_switches_with_one_override() -> None:
    cfg = compose(["dataset=wikibio"])
    assert cfg["dataset"]["name"] == "wikibio"
    assert cfg["dataset"]["hf_id"] == "potsawee/wiki_bio_gpt3_hallucination"


def test_every_stage_param_exists_in_the_composed_config() -> None:
    dvc = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text())
    cfg = compose()
    for name, stage in dvc["stages"].items():
        body = stage.get("do", stage)
        for key in body.get("params", []):
            view = ParamsView(cfg, [str(key)], name)  # resolves llm_catalogue.${llms.<role>} as DVC does
            assert view.has(view.declared[0]), f"stage {name} reads params key {key!r}, absent from conf/"


def test_the_toy_set_selects_the_quick_profile_and_other_sets_the_papers() -> None:
    toy = compose()
    assert toy["profile"]["name"] == "quick" and toy["nli_train"]["profile"] == "quick"
    assert toy["selfcheck_mqag"]["score"]["num_questions_per_sentence"] == 1
    wikibio = compose(["dataset=wikibio"])
    assert wikibio["profile"]["name"] == "paper" and wikibio["nli_train"]["profile"] == "full"
    assert wikibio["selfcheck_mqag"]["score"]["num_questions_per_sentence"] == 5
    assert wikibio["generate"]["samples_to_draw"] == 20  # N_max of the data set
    assert compose(["profile=paper"])["profile"]["name"] == "paper"


def test_an_llm_role_picks_a_catalogue_entry_by_name() -> None:
    cfg = compose(["llms.evaluator=openai_gpt35"])
    assert cfg["llms"]["evaluator"] == "openai_gpt35" and cfg["llms"]["generator"] == "smollm2"
    assert cfg["llm_catalogue"]["openai_gpt35"]["backend"] == "openai"


def test_a_profile_changes_only_what_its_values_files_state() -> None:
    """The profiles select; a knob's paper value is its class's default, and a profile's other
    value is written once, in ``conf/profile_values/<section>/<profile>.yaml`` (composed for the
    selected profile), set on the command line by the section's own key."""
    from hallulab.pipeline.settings_schema import schema_defaults

    profiles = sorted(p.stem for p in (CONF_DIR / "profile").glob("*.yaml"))
    assert profiles == ["paper", "quick"]
    paper = compose(["profile=paper"])
    defaults = schema_defaults()
    for section, values in defaults.items():  # the paper profile composes every class's defaults
        at: Any = paper
        for part in section.split("."):
            at = at[part]
        for key, value in values.items():
            # generate's lengths and the ensemble's members follow the data set (conf/dataset/*.yaml)
            if value != "???" and section not in ("generate", "ensemble"):
                assert at[key] == value, f"{section}.{key}"
    folders = sorted(p.name for p in (CONF_DIR / "profile_values").iterdir() if p.is_dir())
    assert {"hallucheck", "ccp", "self_familiarity", "concepts", "correction"} <= set(folders)
    quick = compose(["profile=quick"])
    for folder in folders:
        assert sorted(p.stem for p in (CONF_DIR / "profile_values" / folder).glob("*.yaml")) == ["quick"]
        stated = yaml.safe_load((CONF_DIR / "profile_values" / folder / "quick.yaml").read_text(encoding="utf-8"))
        for step, values in stated.items():
            chosen = quick[folder][step]
            if isinstance(values, dict):
                assert all(chosen[key] == value for key, value in values.items()), f"{folder}.{step}"
            else:
                assert chosen == values, f"{folder}.{step}"
    assert set(quick["profile"]) == {"name", "description"}
    assert compose(["profile=quick"])["self_familiarity"]["score"]["beam_size"] == 6
    narrower = compose(["profile=quick", "self_familiarity.score.beam_size=9"])
    assert narrower["self_familiarity"]["score"]["beam_size"] == 9
    assert compose(["dataset=nq_open"])["hallucheck"]["score"]["taggings"] == ["ner", "pos", "random"]
    assert compose(["dataset=nq_open", "hallucheck.score.taggings=[ner]"])["hallucheck"]["score"]["taggings"] == ["ner"]


def test_n_has_one_setting_per_meaning() -> None:
    """How many samples a data set holds, how many generate draws, how many a method uses: three
    names, and no config key is called ``num_samples`` any more."""

    def keys(node: object, prefix: str = "") -> set[str]:
        if not isinstance(node, dict):
            return set()
        found: set[str] = set()
        for key, value in node.items():
            found |= {f"{prefix}{key}"} | keys(value, f"{prefix}{key}.")
        return found

    for dataset in ("wikibio", "factualbio", "nq_open", "toy"):
        composed = compose([f"dataset={dataset}"])
        assert not [k for k in keys(composed) if k.split(".")[-1] == "num_samples"]
        held = composed["dataset"]["samples_held"]
        assert composed["generate"]["samples_to_draw"] == held  # by default generate tops a record up to N_max
        assert composed["samples"]["used"] is None  # every held sample
    assert compose(["dataset=wikibio", "samples.used=5"])["generate"]["samples_to_draw"] == 20
