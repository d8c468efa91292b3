"""The project's YAML readers give what OmegaConf's and PyYAML's public loaders give, on every
configuration file of the project and on the cases where the two loaders' rules differ."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from omegaconf import DictConfig, OmegaConf

from hallulab.core.yaml_files import SafeLoader, load_config, safe_read
from tests.conftest import REPO

CONFIG_FILES = [*sorted((REPO / "conf").rglob("*.yaml")), REPO / "params.yaml", REPO / "dvc.yaml"]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "file.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_safe_read_parses_in_c_where_pyyaml_has_libyaml() -> None:
    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML built without libyaml: yaml.SafeLoader is used")
    assert SafeLoader is yaml.CSafeLoader


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_config_file_reads_as_the_public_loaders_read_it(path: Path) -> None:
    loaded = load_config(path)
    assert type(loaded) is type(OmegaConf.load(path))
    assert OmegaConf.to_container(loaded) == OmegaConf.to_container(OmegaConf.load(path))
    assert safe_read(path.read_text(encoding="utf-8")) == yaml.safe_load(path.read_text(encoding="utf-8"))


def test_load_config_of_an_empty_file_is_an_empty_mapping(tmp_path: Path) -> None:
    loaded = load_config(_write(tmp_path, ""))
    assert isinstance(loaded, DictConfig)
    assert OmegaConf.to_container(loaded) == {}


@pytest.mark.parametrize(
    ("text", "expected", "safe"),
    [
        ("lr: 1e-4\n", {"lr": 1e-4}, {"lr": "1e-4"}),  # a float to OmegaConf, a string to YAML 1.1
        ("when: 2026-11-27\n", {"when": "2026-11-27"}, None),  # no timestamps in OmegaConf
        ("n: 0x10\nok: yes\nnone: ~\n", {"n": 16, "ok": True, "none": None}, {"n": 16, "ok": True, "none": None}),
    ],
)
def test_omegaconfs_own_reading_rules_hold(
    tmp_path: Path, text: str, expected: dict[str, object], safe: dict[str, object] | None
) -> None:
    path = _write(tmp_path, text)
    assert OmegaConf.to_container(load_config(path)) == expected
    assert OmegaConf.to_container(load_config(path)) == OmegaConf.to_container(OmegaConf.load(path))
    assert safe_read(text) == yaml.safe_load(text)
    if safe is not None:
        assert safe_read(text) == safe


def test_a_duplicate_key_is_refused_as_omegaconf_refuses_it(tmp_path: Path) -> None:
    with pytest.raises(yaml.constructor.ConstructorError, match="duplicate key seed"):
        load_config(_write(tmp_path, "seed: 1\nseed: 2\n"))


@pytest.mark.parametrize("text", ["3\n", "true\n", "1.5\n"])
def test_a_scalar_at_the_top_level_is_refused_naming_the_file(tmp_path: Path, text: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(OSError, match=r"file\.yaml: a YAML file of configuration must hold a mapping or a list"):
        load_config(path)


def test_a_missing_file_keeps_the_systems_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_config(tmp_path / "absent.yaml")
