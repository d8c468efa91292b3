"""The settings' schema: each knob class as a structured config in Hydra's ConfigStore; every
shipped composition passes it, and an added key or a mistyped value is refused in one line."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from omegaconf import OmegaConf

from hallulab.core.config import CONF_DIR, ConfigError, compose
from hallulab.pipeline import registry
from hallulab.pipeline.settings_schema import (
    GROUP,
    check_settings,
    knob_sections,
    llm_backends,
    option_sections,
    register,
    schema_view,
    settings_problems,
    settings_tree,
)

DATASETS = sorted(p.stem for p in (CONF_DIR / "dataset").glob("*.yaml"))


def _plain(value: Any) -> Any:
    """A default as the composed yaml writes it (tuples as lists, dataclasses as mappings)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _classes() -> dict[str, type]:
    found = {section: cls for section, (cls, _) in {**knob_sections(), **option_sections()}.items()}
    return found | {f"llm/{backend}": cls for backend, cls in llm_backends().items()}


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("profile", ["paper", "quick"])
def test_every_shipped_composition_passes_the_schema(dataset: str, profile: str) -> None:
    params = compose([f"dataset={dataset}", f"profile={profile}"])
    assert [str(problem) for problem in settings_problems(params)] == []


@pytest.mark.parametrize("name", sorted(_classes()))
def test_a_schema_has_its_classs_fields_and_defaults(name: str) -> None:
    """The schema is the class: every field, in order, with the class's default (OmegaConf's
    structured config of it), and nothing else but the keys another reader takes."""
    cls = _classes()[name]
    knob = {**knob_sections(), **option_sections()}.get(name)
    elsewhere = knob[1].elsewhere if knob else ()
    extra = () if knob else ("name", "backend")
    schema = OmegaConf.structured(schema_view(cls, elsewhere, extra))
    fields = [f for f in dataclasses.fields(cls) if f.init]
    assert list(schema) == [*extra, *(f.name for f in fields), *elsewhere]
    written = OmegaConf.to_container(schema, resolve=False)
    assert isinstance(written, dict)
    for f in fields:
        if f.default is not dataclasses.MISSING:
            assert written[f.name] == _plain(f.default), f"{cls.__name__}.{f.name}"
        elif f.default_factory is not dataclasses.MISSING:
            assert written[f.name] == _plain(f.default_factory()), f"{cls.__name__}.{f.name}"


def test_every_declared_knob_section_is_in_the_tree_with_no_edit_here() -> None:
    """A knob class a spec declares is checked by the schema: nothing here lists the methods."""
    tree = settings_tree()
    for section in registry.knob_sections():
        node = tree
        for part in section.split("."):
            node = node.children[part]
        assert node.section is not None and node.section[0] == section


def test_an_added_key_is_refused_naming_it_and_its_neighbours() -> None:
    params = compose(["+samples.temperature=0.5", "+ccp.aggregate.kk=3"])
    problems = {p.key: p for p in settings_problems(params)}
    assert set(problems) == {"samples.temperature", "ccp.aggregate.kk"}
    assert "used" in problems["samples.temperature"].known
    with pytest.raises(ConfigError, match=r"samples\.temperature: no config .* \(and 1 more\); known here: \["):
        check_settings(params)


def test_a_top_level_key_and_a_key_beside_a_steps_declared_keys_are_refused() -> None:
    params = compose(["+temperature=0.5", "+claims.sources=given", "+ccp.score_prompt=x"])
    assert {p.key for p in settings_problems(params)} == {"temperature", "claims.sources", "ccp.score_prompt"}


def test_a_user_named_catalogue_entry_is_checked_against_its_backend() -> None:
    params = compose(["+llm@llm_catalogue.mine=vllm_server", "llms.evaluator=mine"])
    assert settings_problems(params) == []
    params["llm_catalogue"]["mine"]["temprature"] = 0.2
    assert [p.key for p in settings_problems(params)] == ["llm_catalogue.mine.temprature"]


def test_a_mistyped_value_is_refused_in_typeds_words() -> None:
    params = compose([])
    params["samples"]["used"] = "abc"
    with pytest.raises(ConfigError, match=r"^samples\.used: expected an integer, got 'abc' \(str\)$"):
        check_settings(params)
    params = compose([])
    params["ensemble"]["members"] = [{"method": "selfcheck_ngram", "variant": "x", "weight": 2}]
    assert [p.key for p in settings_problems(params)] == ["ensemble.members[0].weight"]


def test_a_value_below_a_declared_key_no_class_describes_is_not_checked() -> None:
    params = compose([])
    params["claims"]["prompt"] = "my_prompt"
    assert settings_problems(params) == []


def test_the_registered_schemas_give_a_config_its_defaults_and_refuse_others(tmp_path: Path) -> None:
    """A config names a schema in its defaults list and states only what differs from the class;
    Hydra's merge refuses a key or a type the class does not declare (but for ``+``, which adds
    a key to any config, and which :func:`check_settings` refuses)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.errors import HydraException

    paths = register()
    assert f"{GROUP}/samples" in paths and f"{GROUP}/ccp/score" in paths and f"{GROUP}/llm/openai" in paths
    (tmp_path / "config.yaml").write_text(
        "defaults:\n  - /schema/samples@samples\n  - /schema/ccp/score@ccp.score\n  - _self_\nsamples:\n  used: 5\n",
        encoding="utf-8",
    )
    with initialize_config_dir(config_dir=str(tmp_path), version_base=None):
        cfg = hydra_compose(config_name="config")
        assert OmegaConf.to_container(cfg.samples) == {
            "used": 5,
            "selection": "first",
            "aggregation": "mean",
            "seed": 0,
        }
        assert cfg.ccp.score.ptrue_top_k == 20
        for override in ("samples.temperature=0.5", "samples.used=abc", "ccp.score.ptrue_top_k=[1]"):
            with pytest.raises(HydraException):
                hydra_compose(config_name="config", overrides=[override])
        # Hydra's `+` adds a key even to a structured config: the check refuses it
        added = hydra_compose(config_name="config", overrides=["+samples.temperature=0.5"])
        problems = settings_problems(OmegaConf.to_container(added))  # type: ignore[arg-type]
        assert [p.key for p in problems] == ["samples.temperature"]


def test_a_stage_checks_the_knob_sections_it_reads_importing_only_their_classes(tmp_path: Path) -> None:
    """A stage's view refuses an added key in a knob section it reads; in a section it does not
    read, the ``code_files`` stage has refused it first (below). The modules it imports for the
    check are those of the sections it reads, which its code manifest lists."""
    from hallulab.core.config import write_params
    from hallulab.pipeline.params import ParamsView
    from hallulab.pipeline.settings_schema import read_sections, section_modules

    write_params(tmp_path / "params.yaml", ["+samples.temperature=0.5"])
    with pytest.raises(ConfigError, match=r"^samples\.temperature: no config .*known here: \['used', "):
        ParamsView.load(str(tmp_path / "params.yaml"), ["samples.used"], "aggregate_selfcheck_ngram")
    ParamsView.load(str(tmp_path / "params.yaml"), ["ccp.aggregate"], "aggregate_ccp")
    assert sorted(read_sections(["ccp"])) == ["ccp.aggregate", "ccp.score"]
    assert sorted(read_sections(["ccp.aggregate", "samples.used"])) == ["ccp.aggregate", "samples"]
    assert section_modules(["ccp.aggregate"]) == ("hallulab.methods.ccp", "hallulab.methods.ccp.knobs")


def test_the_first_stage_refuses_any_setting_the_schema_does_not_declare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m hallulab.pipeline.settings_schema params.yaml`` (which the always-run
    ``code_files`` stage runs) checks every section: one line naming the key, exit status 2."""
    from hallulab.core.config import write_params
    from hallulab.pipeline.settings_schema import main

    write_params(tmp_path / "params.yaml", [])
    assert main([str(tmp_path / "params.yaml")]) == 0
    write_params(tmp_path / "params.yaml", ["+claims.sources=x"])
    assert main([str(tmp_path / "params.yaml")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{tmp_path / 'params.yaml'}: claims.sources: no config under conf/ defines this setting")
    assert "\n" not in err
