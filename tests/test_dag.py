"""End to end through DVC on the session's toy run: every metric, exact invalidation per knob,
per code file and per prompt file, the code a stage ran against its deps, a -S override,
a queued sweep and a return to an NLI model that was already scored."""

from __future__ import annotations

import json
import math
import os
import re
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from hallulab.dag.dvcgen import CMD_ENV
from hallulab.evaluation.gate import check
from hallulab.evaluation.protocol import METRIC_KEYS
from hallulab.nli.train import export_two_label
from hallulab.pipeline import registry
from hallulab.pipeline.graph import pipeline_graph
from tests.conftest import REPO, ToyRun
from tests.workspace import HANG_GUARD_S, dvc, git

pytestmark = pytest.mark.slow
METHODS = list(registry.methods())
CURVES = {f"curve@{m}" for m, spec in registry.methods().items() if spec.sample_curve}
AGGREGATES = {f"aggregate_{m}" for m in METHODS}


def _aggregates_reading(key: str) -> set[str]:
    """The aggregate stages whose method declares ``key`` (the expectation follows the specs,
    so a new method over samples needs no edit here; DVC must still agree with them)."""
    return {f"aggregate_{name}" for name, spec in registry.methods().items() if key in spec.aggregate.params}


def _scores_reading(key: str) -> set[str]:
    """The model steps (score and artifact stages) whose node declares ``key`` (e.g. the NLI
    model's section), read off the pipeline graph."""
    nodes = pipeline_graph().nodes.values()
    return {node.stage for node in nodes if node.kind in ("score", "artifact") and key in node.inputs.params}


def _stages_calling_an_llm() -> set[str]:
    """Every stage that calls an LLM role (all of them name the same catalogue entry by
    default): generate, correct, and the artifacts and score steps that declare a role."""
    stages = {"generate", "correct"}
    stages |= {f"extract_{name}" for name, spec in registry.artifacts().items() if spec.inputs.llm_roles}
    stages |= {f"score_{name}" for name, spec in registry.methods().items() if spec.score and spec.score.llm_roles}
    return stages


#: methods that aggregate over the chosen samples, and those that only choose them
CMD = f"{CMD_ENV} "
SELECTION_AGGREGATES = _aggregates_reading("samples.aggregation")
SAMPLE_CHOICE_AGGREGATES = _aggregates_reading("samples.used") - SELECTION_AGGREGATES


@pytest.fixture(scope="module")
def workspace(toy_run: ToyRun) -> Path:
    return toy_run.root


def _refresh_code_manifests(root: Path) -> None:
    dvc(root, "repro", "--single-item", "code_files")


def _changed_stages(root: Path, *, refresh_code: bool = False) -> set[str]:
    """What DVC would re-run, as `make status` asks it; ``refresh_code``: the code manifests
    refreshed first, as after a code edit (an edit of params or prompts leaves them as the toy
    run wrote them)."""
    if refresh_code:
        _refresh_code_manifests(root)
    status = json.loads(dvc(root, "status", "--json"))
    return {name for name, changes in status.items() if changes != ["always changed"]}


def _edit_params(root: Path, section: str, key: str, value: object) -> None:
    path = root / "params.yaml"
    params = yaml.safe_load(path.read_text())
    params[section][key] = value
    path.write_text(yaml.safe_dump(params, sort_keys=False))


#: Methods whose units the toy set does not label (it labels sentences, and its claims through
#: the claims artifact): they run end to end and write empty metrics. Read from each method's
#: toy gate baseline, which `make regen` writes from the method's first toy run, so a new
#: method needs no edit here; the gate test below holds the run to it.
TOY_UNLABELLED = {
    name
    for name in METHODS
    if json.loads((REPO / f"tests/baselines/toy/{name}.json").read_text(encoding="utf-8"))["metrics"] == {}
}


def test_the_toy_expectations_follow_the_baselines() -> None:
    assert {"sac3", "self_familiarity", "lexical_similarity", "semantic_entropy"} <= TOY_UNLABELLED
    assert not {"selfcheck_nli", "ccp", "hallucheck", "factselfcheck"} & TOY_UNLABELLED


@pytest.mark.parametrize("method", METHODS)
def test_toy_dag_writes_every_metric_of_every_variant(workspace: Path, method: str) -> None:
    metrics = json.loads((workspace / f"metrics/toy/{method}.json").read_text())
    if method in TOY_UNLABELLED:
        assert metrics == {}, f"{method}: the toy set labels none of its units"
        return
    assert metrics, method
    for values in metrics.values():
        assert [k for k in METRIC_KEYS if k in values] == list(METRIC_KEYS)
        assert all(v is None or math.isfinite(v) for v in values.values())
    info = json.loads((workspace / f"metrics/toy/{method}.info.json").read_text())
    assert info["levels"]["sentence"]["labelled_sentences"] == 22
    header = (workspace / f"metrics/toy/pr/{method}.csv").read_text().splitlines()[0]
    assert header == "task,variant,recall,precision"


@pytest.mark.parametrize("method", METHODS)
def test_a_method_writes_unit_scores_only_at_the_levels_it_declares(workspace: Path, method: str) -> None:
    """The benchmark's applicability rule reads the levels a method declares it scores
    (``MethodSpec.scored_levels``); the toy run holds each method to them, a combining method
    to the level its settings name."""
    spec = registry.methods()[method]
    written = set(pd.read_parquet(workspace / f"data/aggregated/toy/{method}.parquet")["level"])
    if spec.combines is not None:
        section = spec.combines.rsplit(".", 1)[0]
        declared = {yaml.safe_load((workspace / "params.yaml").read_text())[section]["level"]}
    else:
        declared = set(spec.scored_levels)
    assert written <= declared, f"{method} wrote {sorted(written)}; it declares {sorted(declared)}"


@pytest.mark.parametrize("method", METHODS)
def test_toy_metrics_pass_the_ci_gate(workspace: Path, method: str) -> None:
    metrics = json.loads((workspace / f"metrics/toy/{method}.json").read_text())
    baseline = json.loads((REPO / f"tests/baselines/toy/{method}.json").read_text())
    assert not check(metrics, baseline)


def _published_variants(method: str) -> set[str]:
    """The variants of the method's committed results files (every data set)."""
    found: set[str] = set()
    for path in (REPO / "results").glob("*/*.json"):
        raw = json.loads(path.read_text())
        if isinstance(raw, dict) and raw.get("method") == method:
            found |= set(raw.get("metrics", {}))
    return found


@pytest.mark.parametrize("method", [m for m, spec in registry.methods().items() if spec.benchmark_variants])
def test_a_methods_benchmark_variants_are_variants_it_writes(workspace: Path, method: str) -> None:
    """What the benchmark table shows of a method is among the variants its toy run wrote, or
    (SAC3, which scores nothing on the toy set) among those of its committed results."""
    frame = pd.read_parquet(workspace / f"data/aggregated/toy/{method}.parquet")
    written = set(frame["variant"]) | _published_variants(method)
    assert set(registry.methods()[method].benchmark_variants) <= written, sorted(written)


@pytest.mark.parametrize("method", [m for m, spec in registry.methods().items() if spec.variant_levels])
def test_a_variant_with_its_own_levels_writes_scores_at_those_levels_only(workspace: Path, method: str) -> None:
    """A variant that declares its levels (LUQ's response reading) is written at them and at no
    other level: the benchmark marks its cells at another level n/a and does not wait for them."""
    frame = pd.read_parquet(workspace / f"data/aggregated/toy/{method}.parquet")
    for variant, levels in registry.methods()[method].variant_levels:
        written = set(frame[frame["variant"] == variant]["level"])
        assert written and written <= set(levels), (variant, sorted(written))


def test_the_toy_run_leaves_nothing_to_do(workspace: Path) -> None:
    assert _changed_stages(workspace, refresh_code=True) == set()


def _foreach_items(foreach: Any, root: Path) -> list[Any]:
    """A foreach's items: a literal list, or a ``${key}`` template resolved from params.yaml."""
    if isinstance(foreach, str) and foreach.startswith("${"):
        node: Any = yaml.safe_load((root / "params.yaml").read_text())
        for part in foreach[2:-1].split("."):
            node = node[part]
        return list(node)
    return list(foreach)


def _fill(text: str, item: Any) -> str:
    """``${item}`` (a string item) or ``${item.<key>}`` (a mapping item) filled in."""
    if isinstance(item, dict):
        for key, value in item.items():
            text = text.replace(f"${{item.{key}}}", str(value))
        return text
    return text.replace("${item}", str(item))


def _code_deps(root: Path, deps: list[str]) -> list[str]:
    """A stage's deps with its code manifest replaced by the source files it lists."""
    out = []
    for dep in deps:
        if dep.startswith("data/code_files/"):
            out += json.loads((root / dep).read_text())["files"]
        else:
            out.append(dep)
    return out


def test_every_stage_depends_on_the_code_it_actually_ran(toy_run: ToyRun) -> None:
    """Import traces written by the stages (sys.modules at exit) against the code manifests
    their deps name, and every traced module loaded from the run's own workspace."""
    stages = yaml.safe_load((toy_run.root / "dvc.yaml").read_text())["stages"]
    commands = {}
    for name, stage in stages.items():
        if "foreach" in stage:
            for index, item in enumerate(_foreach_items(stage["foreach"], toy_run.root)):
                command = _fill(stage["do"]["cmd"], item).replace("${dataset.name}", "toy")
                commands[command.removeprefix(CMD)] = (
                    f"{name}@{item if isinstance(item, str) else index}",
                    _code_deps(toy_run.root, [_fill(d, item) for d in stage["do"]["deps"]]),
                )
        elif not stage.get("always_changed"):  # a stage that runs on every repro needs no code dep
            command = stage["cmd"].replace("${dataset.name}", "toy").removeprefix(CMD)
            commands[command] = (name, _code_deps(toy_run.root, stage["deps"]))
    traces = list(toy_run.traces.glob("*.json"))
    own_code = (toy_run.built_at / "src").resolve()  # where the stages ran
    problems = []
    traced = set()
    for trace in traces:
        ran = json.loads(trace.read_text())
        # the workspace's own src/ (CMD_ENV's PYTHONPATH), never the installed package's folder
        outside = [file for file in ran["files"] if not Path(file).is_relative_to(own_code)]
        problems += [f"{ran['argv'][0]}: ran {file}" for file in outside]
        command = "python " + " ".join(ran["argv"])
        if command not in commands:
            continue
        name, deps = commands[command]
        traced.add(name)
        for file in ran["files"]:
            relative = "src/hallulab/" + Path(file).as_posix().split("/src/hallulab/", 1)[1]
            if not any(relative == d or relative.startswith(d.rstrip("/") + "/") for d in deps):
                problems.append(f"{name}: {relative}")
    assert not problems, "stages ran code they do not depend on:\n" + "\n".join(sorted(set(problems)))
    # the fixture ran every stage (its committed outputs were dropped first), so each one is
    # checked on every CPU; train_nli's model comes from the session's shared run-cache
    untraced = {name for name, _ in commands.values()} - traced - {"train_nli"}
    assert not untraced, f"stages that left no import trace: {sorted(untraced)}"


@pytest.mark.parametrize(
    ("section", "key", "value", "expected"),
    [
        ("selfcheck_ngram", "n", [2], {"aggregate_selfcheck_ngram"}),
        (
            "samples",
            "used",
            3,
            {*SAMPLE_CHOICE_AGGREGATES, *SELECTION_AGGREGATES},
        ),
        ("samples", "selection", "random", {*SAMPLE_CHOICE_AGGREGATES, *SELECTION_AGGREGATES}),
        (
            "selfcheck_mqag",
            "aggregate",
            {"methods": ["bayes"], "beta1": 0.7, "beta2": 0.8, "answerability_threshold": 0.5},
            {"aggregate_selfcheck_mqag"},
        ),
        ("evaluate", "bootstrap_samples", 10, AGGREGATES | CURVES),
        (
            "spacy",
            "batch_size",
            8,
            {
                "generate",
                "score_selfcheck_ngram",
                "score_selfcheck_bertscore",
                "extract_atomic_facts",
                "extract_knowledge_graphs",
                "extract_concepts",
                "score_self_familiarity",
            },
        ),
        ("nli", "batch_size", 8, _scores_reading("nli")),
        ("ccp", "aggregate", {"k": [3], "nli_context": ["no_context"]}, {"aggregate_ccp"}),
        ("claims", "source", "llm", {"extract_claims"}),
        ("nli_train", "epochs", 2, {"train_nli"}),
        ("bertscore", "num_layers", 4, {"score_selfcheck_bertscore", "score_self_familiarity"}),
        ("concepts", "common_words", 5000, {"extract_concepts"}),
        (
            "self_familiarity",
            "aggregate",
            {"ratio": 3, "length_normalisation": "answer"},
            {"aggregate_self_familiarity"},
        ),
        ("selfcheck_prompt", "max_new_tokens", 3, {"score_selfcheck_prompt"}),
        ("response_tokens", "prefix", "Biography:", {"extract_response_tokens"}),
        ("generate", "samples_to_draw", 3, {"generate"}),
        ("selfcheck_ngram", "response_split", "spacy", {"score_selfcheck_ngram"}),
        ("dataset", "limit", 3, {"source", "prepare"}),
        # the QA role: MQAG's answerer and HalluCheck's answer-span reader
        ("llms", "qa", "llamacpp_server", {"score_selfcheck_mqag", "score_hallucheck", "summary"}),
        ("ensemble", "folds", 3, {"aggregate_ensemble"}),
        ("ensemble", "level", "response", {"aggregate_ensemble", *(f"members_ensemble@{i}" for i in range(5))}),
    ],
)
def test_a_param_edit_invalidates_exactly_the_stages_that_read_it(
    workspace: Path, section: str, key: str, value: object, expected: set[str]
) -> None:
    try:
        _edit_params(workspace, section, key, value)
        # the first stage that reads the knob is invalid; its downstream stages become
        # invalid only if that stage's outputs then change (DVC compares output hashes)
        assert _changed_stages(workspace) == expected
    finally:
        git(workspace, "checkout", "params.yaml")


def test_an_llm_catalogue_edit_invalidates_only_the_stages_whose_role_uses_that_entry(workspace: Path) -> None:
    try:
        _edit_params(workspace, "llm_catalogue", "openai_gpt35", {"name": "x", "backend": "openai", "model": "y"})
        assert _changed_stages(workspace) == set()  # no role uses it
        params = yaml.safe_load((workspace / "params.yaml").read_text())
        params["llm_catalogue"]["smollm2"]["batch_size"] = 4
        (workspace / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        expected = _stages_calling_an_llm()
        assert {
            "generate",
            "extract_response_tokens",
            "extract_claims",
            "score_selfcheck_prompt",
            "score_selfcheck_mqag",
            "score_ccp",
            "score_hallucheck",
            "extract_knowledge_graphs",
            "score_factselfcheck",
            "correct",
            "extract_concepts",
            "score_self_familiarity",
            "score_semantic_entropy",
        } <= expected
        assert _changed_stages(workspace) == expected
    finally:
        git(workspace, "checkout", "params.yaml")


def test_a_prompt_file_edit_invalidates_only_the_stage_that_renders_it(workspace: Path) -> None:
    path = workspace / "conf/prompts/mqag_g2.yaml"
    original = path.read_text()
    try:
        path.write_text(original.replace("three wrong", "three incorrect"))
        assert _changed_stages(workspace) == {"score_selfcheck_mqag"}
    finally:
        path.write_text(original)


def test_a_code_edit_invalidates_only_the_stages_that_import_it(workspace: Path) -> None:
    path = workspace / "src/hallulab/evaluation/metrics.py"
    original = path.read_text()
    try:
        path.write_text(original + "\n# edited\n")
        assert _changed_stages(workspace, refresh_code=True) == AGGREGATES | CURVES
    finally:
        path.write_text(original)
        _refresh_code_manifests(workspace)  # back to the manifests the other tests read


def test_a_hub_nli_model_does_not_wait_for_the_offline_training(workspace: Path) -> None:
    try:
        params = yaml.safe_load((workspace / "params.yaml").read_text())
        params["nli"]["model"] = "cross-encoder/nli-deberta-v3-xsmall"
        params["nli"]["depends_on"] = "conf/nli/nli_deberta_v3_xsmall.yaml"
        (workspace / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        ancestors = dvc(workspace, "dag", "score_selfcheck_nli")
        assert "train_nli" not in ancestors and "generate" in ancestors
    finally:
        git(workspace, "checkout", "params.yaml")


def test_exp_run_override_reruns_only_stages_reading_the_knob(workspace: Path) -> None:
    """The README's `dvc exp run -S selfcheck_ngram.n=2`, at n = 4, a value no other test sets:
    the score stage is kept and the aggregation must run here (n = 2 itself may be restored
    from the DVC run-cache the session's workers share; tests/test_dvc_remote.py runs it)."""
    try:
        log = dvc(workspace, "exp", "run", "-S", "selfcheck_ngram.n=4")
        assert "Stage 'score_selfcheck_ngram' didn't change, skipping" in log
        assert "Running stage 'aggregate_selfcheck_ngram'" in log, log[-3000:]
        metrics = json.loads((workspace / "metrics/toy/selfcheck_ngram.json").read_text())
        assert set(metrics) == {"ngram_n4_avg", "ngram_n4_max"}
    finally:
        git(workspace, "checkout", "--", ".")
        dvc(workspace, "checkout", "--force")


WORKER_PID_FILE = ".dvc/tmp/exps/celery/dvc-exp-worker-1.pid"


def _worker_alive(pid_file: Path) -> bool:
    try:
        os.kill(int(pid_file.read_text().strip()), 0)
    except (OSError, ValueError):
        return False
    return True


def _run_queue_to_the_end(workspace: Path, restarts: int) -> str:
    """Start one worker and wait for its process to end, then read the queue's status.

    Waiting on the process, not on ``dvc queue status``, matters: every status call posts a
    control message to the worker's file broker, and a message read while it is still being
    written stops the worker (``JSONDecodeError`` in its log). The worker writes its pid file
    once it is up and leaves it behind when it ends, so the file (removed before each start)
    tells a worker that has not come up yet from one that has already finished: ``dvc queue
    start`` can return only when the worker ends, since the detached worker keeps the pipes
    it inherited open. A worker can also stop with tasks still queued (treeverse/dvc#10562);
    the remedy DVC documents is another ``dvc queue start``, tried up to ``restarts`` times."""
    pid_file = workspace / WORKER_PID_FILE
    for _ in range(restarts + 1):
        pid_file.unlink(missing_ok=True)
        dvc(workspace, "queue", "start", "-j", "1")
        # hang guards, not timings: a worker that never comes up is retried below, and a
        # worker's run ends well inside CI's budget
        started = time.time() + 300
        while not pid_file.exists() and time.time() < started:
            time.sleep(1)
        deadline = time.time() + HANG_GUARD_S
        while _worker_alive(pid_file) and time.time() < deadline:
            time.sleep(3)
        status = dvc(workspace, "queue", "status")
        if "Queued" not in status and "Running" not in status:
            return status
    return status


#: the queued sweep's targets: one method over samples per kind of stored score (spaCy tokens,
#: NLI, MQAG answers); which stages a knob re-runs is test_a_param_edit_invalidates_exactly_the_stages_that_read_it's
QUEUED_METHODS = ("selfcheck_ngram", "selfcheck_nli", "selfcheck_mqag")


def test_queued_sweep_over_n_runs_offline_without_rescoring(workspace: Path) -> None:
    """Each queued experiment runs in a temporary copy of the workspace: there it finds every
    expensive stage of its targets unchanged and runs only their cheap stages."""
    targets = [f"aggregate_{method}" for method in QUEUED_METHODS]
    # one queued point: every queued experiment runs the same way (in its own temporary copy),
    # so a second point would repeat the first one's checks at the price of a whole copy and run
    dvc(workspace, "exp", "run", "--queue", "-S", "samples.used=2", *targets)
    try:
        status = _run_queue_to_the_end(workspace, restarts=3)
        assert status.count("Success") == 1, status
        names = [line.split()[1] for line in status.splitlines() if "Success" in line]
        for name in names:
            log = dvc(workspace, "queue", "logs", name)
            for stage in [f"score_{method}" for method in QUEUED_METHODS]:  # no model call, no spaCy
                assert f"Stage '{stage}' didn't change, skipping" in log, stage
                assert f"Running stage '{stage}'" not in log
            for stage in [f"aggregate_{method}" for method in QUEUED_METHODS]:
                assert re.search(rf"(Running stage|Stage) '{re.escape(stage)}'( is cached)?", log), stage
        table = dvc(workspace, "exp", "show", "--json")
        assert re.search(r'"used": *2\b', table), table
    finally:
        dvc(workspace, "queue", "stop")


def test_nli_model_sweep_returns_to_a_scored_model_without_recomputing(workspace: Path, tmp_path: Path) -> None:
    """Swap the NLI model (the 2-label export of the offline one) and come back: the return
    is a DVC run-cache restore or an all-hit call cache, never a re-scoring."""
    other = export_two_label(workspace / "models/nli_minilm", tmp_path / "two_label")
    # SelfCheck-NLI's stages, and BERTScore's to show a stage that reads no NLI setting is kept;
    # which stages an nli edit re-runs is test_a_param_edit_invalidates_exactly_the_stages_that_read_it's
    targets = ("aggregate_selfcheck_nli", "aggregate_selfcheck_bertscore")
    try:
        log = dvc(
            workspace,
            "exp",
            "run",
            "-S",
            f"nli.model={other}",
            "-S",
            "nli.name=two_label",
            "-S",
            f"nli.depends_on={other}",
            *targets,
        )
        assert "Running stage 'score_selfcheck_nli'" in log
        assert "Stage 'score_selfcheck_bertscore' didn't change, skipping" in log
        back = dvc(workspace, "exp", "run", "-S", "nli=minilm_offline", *targets)
        assert "Stage 'score_selfcheck_nli' is cached - skipping run" in back or ", 0 to compute" in back, back
    finally:
        git(workspace, "checkout", "--", ".")
        dvc(workspace, "checkout", "--force")
