"""The libyaml-parsed readers give what OmegaConf's and PyYAML's pure-Python loaders give,
on every configuration file of the project and on the cases where the two loaders differ."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from omegaconf import OmegaConf

from hallulab.core.yaml_files import OMEGACONF_LOADER, FastLoader, load_config, read_yaml, safe_read
from tests.conftest import REPO

CONFIG_FILES = [*sorted((REPO / "conf").rglob("*.yaml")), REPO / "params.yaml", REPO / "dvc.yaml"]


def test_the_fast_loader_parses_in_c_where_pyyaml_has_libyaml() -> None:
    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML built without libyaml: the pure-Python loader is used")
    assert issubclass(FastLoader, yaml.cyaml.CParser)
    assert FastLoader.get_single_node is yaml.cyaml.CParser.get_single_node  # events from C


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_config_file_reads_as_the_pure_python_loaders_read_it(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert read_yaml(text) == yaml.load(text, Loader=OMEGACONF_LOADER)
    assert safe_read(text) == yaml.safe_load(text)


def test_load_config_equals_omegaconf_load(tmp_path: Path) -> None:
    params = REPO / "params.yaml"
    assert OmegaConf.to_container(load_config(params)) == OmegaConf.to_container(OmegaConf.load(params))
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert OmegaConf.to_container(load_config(empty)) == {}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("lr: 1e-4\n", {"lr": 1e-4}),  # a float to OmegaConf, a string to YAML 1.1's resolver
        ("when: 2026-11-27\n", {"when": "2026-11-27"}),  # no timestamps in OmegaConf
        ("n: 0x10\nok: yes\nnone: ~\n", {"n": 16, "ok": True, "none": None}),
    ],
)
def test_omegaconfs_own_reading_rules_hold(text: str, expected: dict[str, object]) -> None:
    assert read_yaml(text) == expected
    assert read_yaml(text) == yaml.load(text, Loader=OMEGACONF_LOADER)


def test_a_duplicate_key_is_refused_as_omegaconf_refuses_it() -> None:
    with pytest.raises(yaml.constructor.ConstructorError, match="duplicate key seed"):
        read_yaml("seed: 1\nseed: 2\n")
