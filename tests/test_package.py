"""The package stands alone: a wheel of it ships the configs and scores records from a folder
that is not this checkout (the API's smoke test, as a library user runs it)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.workspace import environment

REPO = Path(__file__).resolve().parents[1]

SMOKE = """
import hallulab, hallulab.core.config as config
from pathlib import Path
from hallulab.api import detect
assert Path(hallulab.__file__).is_relative_to(Path.cwd() / "site"), hallulab.__file__
assert not (config.CONF_DIR / "config.yaml").is_symlink() and (config.CONF_DIR / "prompts").is_dir()
scores = detect("records.jsonl", "selfcheck_ngram", ["selfcheck_ngram.n=[1]"])
print(len(scores), sorted(set(scores["variant"])))
"""


@pytest.mark.slow
def test_a_wheel_ships_the_configs_and_scores_outside_the_checkout(tmp_path: Path) -> None:
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        capture_output=True,
        text=True,
        env=environment(),
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("hallulab-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if name.startswith("hallulab/conf/")}
        archive.extractall(tmp_path / "site")
    expected = {
        f"hallulab/conf/{p.relative_to(REPO / 'conf').as_posix()}" for p in (REPO / "conf").rglob("*") if p.is_file()
    }
    assert shipped == expected
    (tmp_path / "records.jsonl").write_text((REPO / "data" / "toy" / "passages.jsonl").read_text())
    # one intra-op thread: the smoke checks the packaging, and spaCy's thinc imports torch, whose
    # worker pool can abort the interpreter at exit ("terminate called without an active
    # exception") when the machine is loaded by the other test process
    env = {**environment(), "PYTHONPATH": str(tmp_path / "site"), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", SMOKE], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-2:] == ["['ngram_n1_avg',", "'ngram_n1_max']"]
