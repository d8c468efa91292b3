"""The README's first command, `make run`, in a copy of the repository (the installed venv
reused): the whole toy DAG, the offline plots page and the summary table."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from hallulab.dag.committed_outputs import committed_outputs
from hallulab.pipeline import registry
from tests.conftest import ToyRun
from tests.workspace import REPO

pytestmark = pytest.mark.slow


def test_make_run_ends_with_a_summary_that_fits_100_columns(toy_run: ToyRun) -> None:
    assert toy_run.output.count("# hallulab summary: toy") == 1, "the summary is printed once"
    tail = toy_run.output[toy_run.output.index("# hallulab summary: toy") :]
    assert "Profile: quick" in tail and "LLMs by role:" in tail and "dvc_plots/index.html" in tail
    assert all(len(line) <= 100 for line in tail.splitlines()), max(tail.splitlines(), key=len)
    marker = "Scored, not evaluated"
    unevaluated = " ".join(tail[tail.index(marker) : tail.index("Plots:")].split()) if marker in tail else ""
    for name in registry.methods():  # a row per evaluated method, the rest named in the note
        assert f"**{name}**" in tail or re.search(rf"\b{name}\b", unevaluated), name
    assert re.search(r"\|   ngram_n1_max +\| +\d+\.\d \[ *\d+\.\d, *\d+\.\d\]", tail)


def test_make_run_ends_by_saying_which_committed_outputs_it_changed(toy_run: ToyRun) -> None:
    """On any CPU: either every committed output came out as committed, or the run names the
    ones it rewrote, by how much, and how to restore them (never a silently dirty tree)."""
    last = toy_run.output[toy_run.output.rindex("committed outputs:") :]
    outputs = committed_outputs(toy_run.root)
    rewritten = [path for path in toy_run.changed if path in outputs]
    if not rewritten:
        assert last.startswith(f"committed outputs: all {len(outputs)} came out as committed"), last
        return
    assert f"{len(rewritten)} of {len(outputs)} differ" in last, last
    said = " ".join(last.split())
    meanings = ("nothing needs committing", "Nothing needs committing", "computed something else")
    assert "git checkout -- " in last and any(meaning in said for meaning in meanings), last
    assert all(len(line) <= 100 for line in last.splitlines()), last


def test_make_run_writes_metrics_scores_and_offline_plots(toy_run: ToyRun) -> None:
    root = toy_run.root
    metrics = json.loads((root / "metrics/toy/selfcheck_ngram.json").read_text())
    assert "ngram_n1_max" in metrics
    assert (root / "dvc_plots/index.html").is_file() and (root / "dvc_plots/vendor/vega.min.js").is_file()
    assert (root / "metrics/toy/summary.md").is_file() and (root / "metrics/toy/summary.csv").is_file()


def test_the_nli_metrics_file_holds_no_timing(toy_run: ToyRun) -> None:
    """Seconds and pairs/s differ by machine: they go to logs/, never into a committed output."""
    heldout = json.loads((toy_run.root / "metrics/nli_model/heldout.json").read_text())
    text = json.dumps(heldout)
    assert "seconds" not in text and "per_second" not in text
    assert "heldout_accuracy" in heldout


def test_make_run_leaves_every_committed_output_as_committed(toy_run: ToyRun) -> None:
    """`git status` is clean after `make run` (run here with another OpenMP thread count in
    its environment): every output comes out bit for bit. Expected where this CPU computes
    the probe's digests as the machine that made the committed outputs did (the machines in
    perf/cpu_reproducibility.json agree); a CPU that computes other bits (one without
    AVX-512, say) may rewrite last bits, which the CI gate compares within its tolerance."""
    probe = REPO / "perf" / "cpu_reproducibility.py"
    reference = json.loads((REPO / "perf" / "cpu_reproducibility.json").read_text())["reference"]
    done = subprocess.run([sys.executable, str(probe), "--fingerprint"], capture_output=True, text=True, check=True)
    here = json.loads(done.stdout)
    if here != reference:
        pytest.skip(f"this CPU's float kernels give other bits than the reference machine's: {here} != {reference}")
    assert toy_run.changed == (), f"make run rewrote or left: {toy_run.changed}"


def test_make_run_needs_nothing_beside_the_clone(toy_run: ToyRun) -> None:
    """The toy run (this fixture's `make run`, and the train_nli run the session's workers
    share) ran with no data root: the quick NLI model trained on the open subset committed in
    data/nli_open, and Self-Familiarity read the packaged word list."""
    root = toy_run.root
    heldout = json.loads((root / "metrics/nli_model/heldout.json").read_text())
    assert set(heldout["heldout_accuracy"]) == {"open_snli_test"}
    assert set(heldout["train"]["by_source"]) == {"open_snli_dev", "open_fever"}
    corpora = json.loads((root / "data/data_files/nli_corpora.json").read_text())
    assert corpora["data_root"] is None and all(path.startswith("data/nli_open/") for path in corpora["files"])
    assert json.loads((root / "data/data_files/word_list.json").read_text())["source"] == "wordfreq"
