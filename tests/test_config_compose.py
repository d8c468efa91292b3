"""compose(): each call is the composition of the files as they are now, as a copy of its own."""

from __future__ import annotations

import os
from pathlib import Path

from hallulab.core.config import compose


def _conf(root: Path, value: str) -> Path:
    conf = root / "conf"
    (conf / "dataset").mkdir(parents=True, exist_ok=True)
    (conf / "config.yaml").write_text("defaults:\n  - dataset: toy\n  - _self_\nsamples:\n  used: 5\n")
    (conf / "dataset" / "toy.yaml").write_text(f"name: toy\nlimit: {value}\n")
    return conf


def test_a_composition_is_a_copy_of_its_own(tmp_path: Path) -> None:
    conf = _conf(tmp_path, "10")
    first = compose(["samples.used=3"], conf)
    first["samples"]["used"] = 99
    second = compose(["samples.used=3"], conf)
    assert second == {"dataset": {"name": "toy", "limit": 10}, "samples": {"used": 3}}


def test_an_edited_config_file_is_read_again_even_with_its_size_and_time_kept(tmp_path: Path) -> None:
    """The files' contents decide, not their modification times: an edit that keeps a file's size,
    with its time set back, still changes the composition."""
    conf = _conf(tmp_path, "10")
    assert compose([], conf)["dataset"]["limit"] == 10
    toy = conf / "dataset" / "toy.yaml"
    before = toy.stat()
    toy.write_text("name: toy\nlimit: 20\n")
    os.utime(toy, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert toy.stat().st_size == before.st_size
    assert compose([], conf)["dataset"]["limit"] == 20
    (conf / "dataset" / "other.yaml").write_text("name: other\nlimit: 1\n")
    assert compose(["dataset=other"], conf)["dataset"] == {"name": "other", "limit": 1}
