"""The package stands alone: a wheel of it ships the configs, the open NLI pairs and the committed
calibrations, scores records from a folder that is not this checkout (the API's smoke test, as a
library user runs it), and after one command (`hallulab nli train`) scores with the NLI methods
too."""

from __future__ import annotations

import json
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


@pytest.fixture(scope="module")
def wheel_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the built wheel's files under ``site/`` (put on PYTHONPATH ahead of the
    checkout's editable install) and nothing of the checkout: where a library user stands."""
    folder = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(folder), str(REPO)],
        capture_output=True,
        text=True,
        env=environment(),
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = folder.glob("hallulab-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(folder / "site")
    return folder


def wheel_environment(folder: Path) -> dict[str, str]:
    # one intra-op thread: the smoke checks the packaging, and spaCy's thinc imports torch, whose
    # worker pool can abort the interpreter at exit ("terminate called without an active
    # exception") when the machine is loaded by the other test process
    return {**environment(), "PYTHONPATH": str(folder / "site"), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@pytest.mark.slow
def test_a_wheel_ships_the_configs_and_scores_outside_the_checkout(wheel_site: Path) -> None:
    shipped = {
        p.relative_to(wheel_site / "site").as_posix()
        for p in (wheel_site / "site/hallulab/conf").rglob("*")
        if p.is_file()
    }
    expected = {
        f"hallulab/conf/{p.relative_to(REPO / 'conf').as_posix()}" for p in (REPO / "conf").rglob("*") if p.is_file()
    }
    assert shipped == expected
    (wheel_site / "records.jsonl").write_text((REPO / "data" / "toy" / "passages.jsonl").read_text())
    done = subprocess.run(
        [sys.executable, "-c", SMOKE], cwd=wheel_site, env=wheel_environment(wheel_site), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-2:] == ["['ngram_n1_avg',", "'ngram_n1_max']"]


@pytest.mark.slow
def test_after_hallulab_nli_train_a_wheel_scores_with_nli(wheel_site: Path) -> None:
    """The wheel carries the open NLI pairs; without a model the NLI method stops in one line
    naming `hallulab nli train` before any work; after it (a small recipe, to keep the test
    short: the command is the user's), the same command scores."""
    opened = {p.name: p.read_bytes() for p in (wheel_site / "site/hallulab/nli_open").iterdir()}
    assert opened == {p.name: p.read_bytes() for p in (REPO / "data/nli_open").iterdir()}
    folder = wheel_site / "user"
    folder.mkdir()
    (folder / "records.jsonl").write_text((REPO / "data" / "toy" / "passages.jsonl").read_text())
    env = {**wheel_environment(wheel_site), "HALLULAB_MODEL_DIR": str(wheel_site / "model-home")}

    def hallulab(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hallulab.cli", *args], cwd=folder, env=env, capture_output=True, text=True
        )

    score = ("score", "records.jsonl", "--method", "selfcheck_nli", "-o", "nli.csv")
    refused = hallulab(*score)
    assert refused.returncode == 2, refused.stderr[-3000:]
    assert refused.stderr.startswith("hallulab score: error: NLI model folder 'models/nli_minilm' not found")
    assert "`hallulab nli train`" in refused.stderr.splitlines()[0]
    small = ("nli_train.sources.open_snli_dev=96", "nli_train.sources.open_fever=32", "nli_train.heldout_max_pairs=16")
    trained = hallulab("nli", "train", *(arg for setting in small for arg in ("-S", setting)))
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert f"{wheel_site / 'model-home' / 'nli_minilm'}" in trained.stdout
    assert "held-out accuracy: open_snli_test" in trained.stdout
    scored = hallulab(*score)
    assert scored.returncode == 0, scored.stderr[-3000:]
    rows = (folder / "nli.csv").read_text().splitlines()
    assert (
        rows[0].startswith("method,") and len(rows) > 10 and all(row.startswith("selfcheck_nli,") for row in rows[1:])
    )


def test_a_wheel_ships_the_committed_calibrations_and_reads_them_by_name(wheel_site: Path) -> None:
    """`hallulab score --calibration wikibio` outside a checkout: the wheel holds every committed
    calibration file as committed (the package's committed/ folder, a link in the checkout),
    and an installed hallulab finds one by its data set's name and lists them all."""
    packaged = wheel_site / "site/hallulab/calibration/committed"
    shipped = {p.relative_to(packaged).as_posix(): p.read_bytes() for p in packaged.rglob("*") if p.is_file()}
    committed = REPO / "results/calibration"
    assert shipped == {p.relative_to(committed).as_posix(): p.read_bytes() for p in committed.rglob("*.json")}
    assert not packaged.is_symlink() and len(shipped) > 50
    named = (
        "import hallulab, hallulab.core.config as config\n"
        "from pathlib import Path\n"
        "from hallulab.calibration.stored import resolve_calibration\n"
        "assert Path(hallulab.__file__).is_relative_to(Path.cwd() / 'site') and config.package_checkout() is None\n"
        "stored = resolve_calibration('wikibio', 'selfcheck_ngram')\n"
        "print(stored.name, stored.path)\n"
    )
    env = wheel_environment(wheel_site)
    done = subprocess.run([sys.executable, "-c", named], cwd=wheel_site, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == [
        "wikibio/selfcheck_ngram/ngram_n1_max@sentence",
        "(isotonic)",
        str(packaged / "wikibio/selfcheck_ngram.ngram_n1_max.json"),
    ]
    listed = subprocess.run(
        [sys.executable, "-m", "hallulab.cli", "calibrations"], cwd=wheel_site, env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr[-3000:]
    rows = listed.stdout.splitlines()[1:]
    assert len(rows) == len(shipped)
    assert f"\t{packaged}/wikibio/selfcheck_ngram.ngram_n1_max.json" in listed.stdout


def test_a_wheel_makes_a_column_of_a_labelled_file_outside_a_checkout(wheel_site: Path) -> None:
    """`hallulab benchmark FILE -o DIR` from an installed package: the table's settings of each
    cell (conf/benchmark.yaml) come from the wheel, and the column holds the length baseline
    and the method asked for, each with its statistics, and a calibration of the method."""
    folder = wheel_site / "column-user"
    folder.mkdir()
    (folder / "mine.jsonl").write_text((REPO / "examples" / "nq_open_60.jsonl").read_text(encoding="utf-8"))
    env = {**wheel_environment(wheel_site), "HALLULAB_CACHE_DIR": str(folder / "cache")}
    done = subprocess.run(
        [sys.executable, "-m", "hallulab.cli", "benchmark", "mine.jsonl", "--methods", "selfcheck_ngram"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    column = json.loads((folder / "column" / "column.json").read_text(encoding="utf-8"))
    assert {c["method"] for c in column["cells"]} == {"length", "selfcheck_ngram"}
    assert all(c["units"] == 60 and c["metrics"]["roc_auc"][0] is not None for c in column["cells"])
    assert (folder / "column" / "calibrations" / "selfcheck_ngram.ngram_n1_max.json").is_file()
