"""A method is its package, its conf and ``make regen``: nothing else names it.

In a copy of the checkout, a throw-away method (a sentence-level score step that makes no model
call, declared shardable, with a knob class) is added as docs/how-to/add-a-method.md says, ``make
regen`` is run, and every reader of the pipeline's shape finds it without another file edited:
``dvc.yaml`` (its score and aggregate stages, its evaluate item), the sharded ``dvc.yaml``, the
API, ``hallulab plan``, the report page of its scores, and the knob and params checks (its knob
class, declared on its spec, checked against its conf). Its toy baseline comes from running only
its own stages (``dvc repro aggregate_throwaway``, no whole ``make run``), then ``make regen``.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import yaml

from tests.workspace import BIN, HANG_GUARD_S, copy_workspace, environment

PACKAGE = {
    "__init__.py": '''
        """A throw-away method of the new-method test: each sentence scored by its length."""

        from hallulab.methods.throwaway.raw import ThrowawayScores
        from hallulab.pipeline.spec import NO_MODEL_CALLS, KnobSection, MethodSpec, StepInputs

        SPEC = MethodSpec(
            name="throwaway",
            title="Throw-away sentence lengths",
            paper="none",
            section="none",
            level="sentence",
            raw=ThrowawayScores,
            score=StepInputs(params=("throwaway.unit",)),
            aggregate=StepInputs(params=("throwaway.scale",)),
            calls=NO_MODEL_CALLS,
            shards=True,
            knobs=(KnobSection("throwaway", "knobs:ThrowawayKnobs", elsewhere=("unit",)),),
        )
    ''',
    "raw.py": '''
        """Stored raw scores: each record's sentence lengths."""

        from dataclasses import dataclass

        from hallulab.methods.raw_scores import RawScores


        @dataclass
        class ThrowawayScores(RawScores):
            lengths: dict[str, list[int]]
    ''',
    "score.py": '''
        """Expensive step (here: none): the length of every sentence."""

        from hallulab.methods.throwaway.raw import ThrowawayScores
        from hallulab.pipeline.context import BuildContext


        def score(ctx: BuildContext) -> ThrowawayScores:
            words = ctx.params.get("throwaway.unit") == "words"
            return ThrowawayScores(
                {p.id: [len(s.split()) if words else len(s) for s in p.sentences] for p in ctx.records}
            )
    ''',
    "knobs.py": '''
        """The throw-away method's knob class."""

        from dataclasses import dataclass

        from hallulab.core.config import setting


        @dataclass(frozen=True)
        class ThrowawayKnobs:
            """The aggregate step's knob (``unit`` is the score step's)."""

            scale: float = setting(1.0, minimum=0.0, doc="what a length is multiplied by")
    ''',
    "aggregate.py": '''
        """Cheap step: a sentence's length times the scale, its response's mean."""

        from hallulab.core.config import typed
        from hallulab.core.units import ScoreTable
        from hallulab.methods.throwaway.knobs import ThrowawayKnobs
        from hallulab.methods.throwaway.raw import ThrowawayScores
        from hallulab.pipeline.context import AggregateContext, Aggregated


        def aggregate(ctx: AggregateContext[ThrowawayScores]) -> Aggregated:
            scale = typed(ThrowawayKnobs, {"scale": ctx.params.get("throwaway.scale")}, "throwaway").scale
            table = ScoreTable()
            for record, lengths in ctx.raw.lengths.items():
                table.add_sentences("length", record, [scale * length for length in lengths])
            return Aggregated(table.frame(), {"records": len(ctx.raw.lengths)})
    ''',
}
CONF = """\
# @package _global_
throwaway:
  unit: characters
"""


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**environment(), "PYTHONPATH": str(root / "src")}  # the copy's package, not the installed one
    done = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert done.returncode == 0, f"{args}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def test_a_method_added_by_its_package_and_make_regen_reaches_every_reader(tmp_path: Path) -> None:
    root = copy_workspace(tmp_path / "checkout")
    package = root / "src" / "hallulab" / "methods" / "throwaway"
    package.mkdir()
    for name, text in PACKAGE.items():
        (package / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    (root / "conf" / "method" / "throwaway.yaml").write_text(CONF, encoding="utf-8")
    _run(root, "make", "-o", str(BIN.parent / ".hallulab-installed"), "regen", f"VENV={BIN.parent}")
    python = str(BIN / "python")

    stages = yaml.safe_load((root / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    assert "throwaway.unit" in stages["score_throwaway"]["params"]
    assert "throwaway.scale" in stages["aggregate_throwaway"]["params"]
    assert any("throwaway.json" in str(m) for m in stages["aggregate_throwaway"]["metrics"])
    assert (root / "data" / "code_files" / "score_throwaway.json").is_file()

    sharded = tmp_path / "sharded.yaml"
    _run(root, python, "-m", "hallulab.dag.dvcgen", "--shards", "2", "--out", str(sharded))
    split = yaml.safe_load(sharded.read_text(encoding="utf-8"))["stages"]
    assert split["score_throwaway"]["foreach"] == [0, 1] and "merge_score_throwaway" in split

    api = "from hallulab.api import detect; print(detect('data/toy/passages.jsonl', 'throwaway').to_csv(index=False))"
    scores = _run(root, python, "-c", api).stdout
    assert scores.splitlines()[1].startswith("throwaway,length,sentence,"), scores[:500]

    plan = _run(root, python, "-m", "hallulab.cli", "plan", "--dataset", "toy").stdout
    assert "score_throwaway" in plan, plan

    scored, page, records = tmp_path / "scores.csv", tmp_path / "report.html", "data/toy/passages.jsonl"
    _run(root, python, "-m", "hallulab.cli", "score", records, "--method", "throwaway", "-o", str(scored))
    _run(root, python, "-m", "hallulab.cli", "report", str(scored), "--records", records, "-o", str(page))
    assert "Throw-away sentence lengths" in page.read_text(encoding="utf-8")

    # the checks of knob classes and params find the new one through its spec, with no edit
    checks = ("tests/test_knob_declarations.py", "tests/test_params.py", "tests/test_graph.py")
    _run(root, python, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *checks)

    # its toy baseline: only its own stages run, then make regen writes the baseline from its metrics
    log = _run(root, str(BIN / "dvc"), "repro", "aggregate_throwaway").stdout
    assert "Running stage 'score_throwaway'" in log and "Running stage 'train_nli'" not in log
    _run(root, "make", "-o", str(BIN.parent / ".hallulab-installed"), "regen", f"VENV={BIN.parent}")
    baseline = json.loads((root / "tests" / "baselines" / "toy" / "throwaway.json").read_text(encoding="utf-8"))
    assert baseline["metrics"] == json.loads((root / "metrics" / "toy" / "throwaway.json").read_text(encoding="utf-8"))
