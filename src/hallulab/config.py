"""Reading the composed parameters that DVC hands to every stage.

DVC composes ``params.yaml`` from ``conf/`` (Hydra) on ``dvc exp run``; ``dvc repro``
uses the committed file as it is. Stage scripts therefore read ``params.yaml`` with
OmegaConf and never call ``@hydra.main`` (the DVC Hydra guide's advice).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

REPO_ROOT = Path(__file__).resolve().parents[2]
CONF_DIR = REPO_ROOT / "conf"


def load_params(path: str | Path = "params.yaml") -> DictConfig:
    """The composed parameters; a missing file says how to make it."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: run `make params` (or `dvc exp run`) to compose it from conf/")
    cfg = OmegaConf.load(path)
    if not isinstance(cfg, DictConfig):
        raise ValueError(f"{path}: expected a mapping at the top level")
    return cfg


def compose(overrides: Sequence[str] = (), conf_dir: Path = CONF_DIR) -> dict[str, Any]:
    """Compose ``conf/config.yaml`` with Hydra overrides, resolved to plain containers."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(conf_dir.resolve()), version_base=None):
        cfg = hydra_compose(config_name="config", overrides=list(overrides))
    container = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(container, dict)
    return {str(k): v for k, v in container.items()}


def dataset_config(name: str, conf_dir: Path = CONF_DIR) -> dict[str, Any]:
    """One data set's config as ``-S dataset=<name>`` selects it (conf/dataset/<name>.yaml)."""
    path = conf_dir / "dataset" / f"{name}.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"no data set config {path}")
    loaded = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    assert isinstance(loaded, dict)
    return {str(k): v for k, v in loaded.items()}


def section(cfg: DictConfig, name: str) -> dict[str, Any]:
    """One section as a plain dict; a missing section names itself."""
    if name not in cfg:
        raise KeyError(f"params has no section {name!r}; is conf/ composed into params.yaml?")
    value = OmegaConf.to_container(cfg[name], resolve=True)
    assert isinstance(value, dict)
    return {str(k): v for k, v in value.items()}


def as_int_list(value: Any, name: str) -> list[int]:
    """A knob that may be one int (a sweep point) or a list of ints (several at once)."""
    items = value if isinstance(value, list | tuple) else [value]
    try:
        out = [int(v) for v in items]
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name}: expected an int or a list of ints, got {value!r}") from error
    if not out:
        raise ValueError(f"{name}: empty")
    return out


def write_params(path: str | Path = "params.yaml", overrides: Sequence[str] = (), conf_dir: Path = CONF_DIR) -> None:
    """Compose conf/ into ``path`` exactly as ``dvc exp run`` does (DVC's own dumper)."""
    from dvc.utils.hydra import compose_and_dump

    compose_and_dump(Path(path), str(conf_dir.resolve()), None, "config", str(REPO_ROOT), list(overrides))


if __name__ == "__main__":  # python -m hallulab.config [overrides...] -> params.yaml
    import sys

    write_params("params.yaml", sys.argv[1:])
