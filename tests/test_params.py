"""params.yaml must be exactly what `dvc exp run` would compose from conf/ defaults."""

from __future__ import annotations

from pathlib import Path

import yaml

from hallulab.config import REPO_ROOT, compose, write_params


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
            node = cfg
            for part in str(key).split("."):
                assert part in node, f"stage {name} reads params key {key!r}, absent from conf/"
                node = node[part]
