"""The package's layers point one way: the orchestration (``hallulab.dag``) reads the stage
contract (``hallulab.pipeline``) and nothing else imports it, neither a module of the package
nor a stage script; text utilities sit below the data layer, and both below the methods; the
NLI layer (``hallulab.nli``) reads the data layer, which imports none of it; the stage contract
does not reach up into the steps it runs (generation, correction); the foundation
(``hallulab.core``) imports no other hallulab package, which is what lets the DAG generator
name it as one dependency of every stage; and no modules import one another round a circle,
a lazy import (inside a function, or under ``if TYPE_CHECKING:``) counted like any other.

The rules are import-linter contracts, declared in pyproject.toml under ``[tool.importlinter]``
and checked by its command line, ``lint-imports`` (which ``make lint``, ``make test`` and
``make test-fast`` run as well). These tests run it, so the suite fails on an upward import
before it shows up as a cycle, and show on a scratch tree that each contract does fail."""

from __future__ import annotations

import importlib.machinery
import subprocess
import sys
from pathlib import Path

import grimp

from hallulab.core.config import REPO_ROOT

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
CONFIG = REPO_ROOT / "pyproject.toml"
CONTRACTS = (
    "orchestration",
    "foundation",
    "text-data-methods",
    "nli-above-data",
    "no-circles",
    "independent-methods",
    "independent-data-sets",
    "report-reads-outputs",
    "stage-contract",
)


def _lint_imports(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the project's contracts, reading the packages found from ``cwd``
    (the command puts its working folder first on the import path)."""
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", *args, str(CONFIG)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_import_contracts_hold() -> None:
    done = _lint_imports(REPO_ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in done.stdout, done.stdout


def _import_circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every set of modules that import one another round a circle (a strongly connected
    component of two or more): a module is in one when it imports, through any chain, a module
    that imports it back."""
    circles: list[list[str]] = []
    seen: set[str] = set()
    for module in sorted(graph.modules):
        if module in seen:
            continue
        circle = graph.find_upstream_modules(module) & graph.find_downstream_modules(module)
        if circle:
            seen |= circle | {module}
            circles.append(sorted(circle | {module}))
    return circles


def test_no_import_circles() -> None:
    """No hallulab modules import one another round a circle, and no package's subpackages or
    modules do (each counted with everything under it, as import-linter's ``acyclic`` contract
    reads them), counting every import: at module level, inside a function or under
    ``if TYPE_CHECKING:``. A lazy import does not make a circle acceptable: it only moves the
    failure from import time to the first call that reaches it."""
    graph = grimp.build_graph("hallulab", include_external_packages=False, cache_dir=None)
    circles = _import_circles(graph)
    breakers = {
        package: sorted(cut)
        for package in sorted(graph.modules)
        if graph.find_children(package) and (cut := graph.nominate_cycle_breakers(package))
    }
    assert not circles and not breakers, f"module circles: {circles}; package circles, cut by removing: {breakers}"


def test_the_stage_scripts_are_the_checkouts_folder() -> None:
    """The contracts read the stage scripts as the namespace package ``stages``: from the
    repository root that must be the checkout's folder alone (a regular package of that name
    installed elsewhere would take its place, and the scripts would go unchecked)."""
    spec = importlib.machinery.PathFinder.find_spec("stages", [str(REPO_ROOT), *sys.path])
    assert spec is not None
    assert spec.origin is None, spec.origin  # a namespace package: no __init__.py
    assert {Path(p) for p in spec.submodule_search_locations or []} == {REPO_ROOT / "stages"}


# A scratch tree with the modules the contracts name, and one upward import per contract, each
# inside a function (a lazy import is an import all the same).
SCRATCH = {
    "hallulab/__init__.py": "",
    "hallulab/core/__init__.py": "",
    "hallulab/core/io.py": "def write() -> None:\n    import hallulab.pipeline.runner\n",
    "hallulab/dag/__init__.py": "",
    "hallulab/dag/dvcgen.py": "import hallulab.pipeline.runner\n",
    "hallulab/data/__init__.py": "",
    "hallulab/data/records.py": "import hallulab.text.answers\n",
    "hallulab/data/fingerprints.py": "def fingerprint() -> None:\n    from hallulab.nli.open_subset import FILES\n",
    "hallulab/data/sets/__init__.py": "",
    "hallulab/data/sets/spec.py": "",
    "hallulab/data/sets/wikibio.py": "from hallulab.data.sets import spec\n",
    "hallulab/data/sets/sac3.py": "def load() -> None:\n    from hallulab.data.sets.wikibio import SPEC\n",
    "hallulab/nli/__init__.py": "",
    "hallulab/nli/data.py": "from hallulab.nli.open_subset import open_sources\n",
    "hallulab/nli/open_subset.py": "def build() -> None:\n    from hallulab.nli.data import training_sources\n",
    "hallulab/methods/__init__.py": "from hallulab.data import records\n",
    "hallulab/methods/bertscore.py": "",
    "hallulab/methods/graph_knobs.py": "",
    "hallulab/methods/raw_scores.py": "",
    "hallulab/methods/sample_graph.py": "",
    "hallulab/methods/sample_matrix.py": "",
    "hallulab/methods/sample_scores.py": "",
    "hallulab/methods/sample_selection.py": "",
    "hallulab/methods/sentence_similarity.py": "",
    "hallulab/methods/similarity_graph.py": "",
    "hallulab/methods/skipped.py": "",
    "hallulab/methods/token_statistics.py": "",
    "hallulab/methods/ccp/__init__.py": (
        "from hallulab.methods import raw_scores, sample_graph, sample_matrix, similarity_graph, skipped\n"
        "from hallulab.methods import sentence_similarity, token_statistics\n"
        "from hallulab.methods import graph_knobs, sample_scores, sample_selection\n"
    ),
    "hallulab/methods/self_familiarity/__init__.py": "",
    "hallulab/methods/self_familiarity/similarity.py": "from hallulab.methods.bertscore import x\n",
    "hallulab/methods/semantic_entropy/__init__.py": "",
    "hallulab/methods/semantic_entropy/score.py": "def score() -> None:\n    from hallulab.methods.ccp import SPEC\n",
    "hallulab/text/__init__.py": "",
    "hallulab/text/answers.py": "def normalise() -> None:\n    from hallulab.data import records\n",
    "hallulab/pipeline/__init__.py": "",
    "hallulab/pipeline/runner.py": "def run_stage() -> None:\n    from hallulab.correction import run\n",
    "hallulab/generation.py": "",
    "hallulab/correction/__init__.py": "",
    "hallulab/correction/run.py": "",
    "stages/generate.py": "def main() -> None:\n    from hallulab.dag import dvcgen\n",
    "hallulab/report/__init__.py": "",
    "hallulab/report/units.py": "from hallulab.methods.ccp import SPEC\n",
}
UPWARD = {
    "orchestration": "stages.generate -> hallulab.dag.dvcgen",
    "foundation": "hallulab.core.io -> hallulab.pipeline.runner",
    "text-data-methods": "hallulab.text.answers -> hallulab.data.records",
    "nli-above-data": "hallulab.data.fingerprints -> hallulab.nli.open_subset",
    # a circle has no upward import: the contract names the package whose modules make one
    "no-circles": "No cycles are allowed in hallulab.nli.",
    "independent-methods": "hallulab.methods.semantic_entropy.score -> hallulab.methods.ccp",
    "independent-data-sets": "hallulab.data.sets.sac3 -> hallulab.data.sets.wikibio",
    "report-reads-outputs": "hallulab.report.units -> hallulab.methods.ccp",
    "stage-contract": "hallulab.pipeline.runner -> hallulab.correction.run",
}


def test_each_contract_fails_on_an_upward_import(tmp_path: Path) -> None:
    assert set(UPWARD) == set(CONTRACTS)
    for name, text in SCRATCH.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    done = _lint_imports(tmp_path, *(arg for contract in CONTRACTS for arg in ("--contract", contract)))
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"Contracts: 0 kept, {len(CONTRACTS)} broken." in done.stdout, done.stdout
    for edge in UPWARD.values():
        assert edge in done.stdout, done.stdout
