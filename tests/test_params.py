"""params.yaml must be exactly what `dvc exp run` would compose from conf/ defaults."""

from __future__ import annotations

from pathlib import Path

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


def test_a_methods_profile_values_live_with_the_method() -> None:
    """The profiles select; the values are the method's (conf/method/<m>.yaml ``by_profile``),
    set on the command line by the method's own key."""
    profiles = sorted(p.stem for p in (CONF_DIR / "profile").glob("*.yaml"))
    # every section with a table of profile values, found, not listed: a new method's table is checked too
    owners = sorted(key for key, value in compose([]).items() if isinstance(value, dict) and "by_profile" in value)
    assert {"hallucheck", "ccp", "self_familiarity", "correction"} <= set(owners)
    for name in profiles:
        composed = compose([f"profile={name}"])
        assert set(composed["profile"]) == {"name", "description"}, "a method's values belong to the method"
        for owner in owners:
            table = composed[owner]["by_profile"]
            assert sorted(table) == profiles
            # the values feed the owner's own keys or those of one of its sections (score, generate, ...)
            sections = [
                composed[owner],
                *(v for k, v in composed[owner].items() if isinstance(v, dict) and k != "by_profile"),
            ]
            for key, value in table[name].items():
                assert all(section[key] == value for section in sections if key in section), f"{owner}.{key}"
        assert composed["concepts"]["word_list"] == composed["self_familiarity"]["by_profile"][name]["word_list"]
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
