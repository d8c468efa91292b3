"""The pipeline graph is the one source of dvc.yaml's stages and edges: every stage is a node,
every dependency on another stage's file is a read of an output that stage declares, and the
edges a setting chooses (an ensemble's members, the correction's methods) are the configured
graph's."""

from __future__ import annotations

from typing import Any

import yaml

from hallulab.core.config import compose
from hallulab.pipeline import registry
from hallulab.pipeline.graph import pipeline_graph, setting_of
from hallulab.pipeline.stage_outputs import outputs_of
from tests.conftest import REPO


def _dvc_stages() -> dict[str, Any]:
    stages: dict[str, Any] = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    return stages


def test_every_dvc_stage_is_a_node_of_the_graph_in_its_order() -> None:
    assert [node.stage for node in pipeline_graph().definitions] == list(_dvc_stages())


def test_every_read_is_an_output_its_producer_declares() -> None:
    graph = pipeline_graph()
    checked = 0
    for node in graph.nodes.values():
        for read in node.reads:
            if "${" in read.name:
                continue  # chosen by a setting or a foreach item: the configured graph's (below)
            producer = graph.nodes[read.stage]
            assert read.output in producer.writes, f"{node.stage} reads {read.output!r} of {read.stage}"
            assert producer.writes[read.output].path == read.path
            checked += 1
    assert checked > 100


def test_a_stage_depends_on_the_files_of_the_nodes_it_reads_and_on_nothing_else_of_another_stage() -> None:
    """Every dep of a rendered stage that another stage writes is a declared read of the node."""
    graph = pipeline_graph()
    written = {out.path: node.stage for node in graph.definitions for out in node.writes.values()}
    for node in graph.definitions:
        deps = _dvc_stages()[node.stage]
        deps = deps.get("do", deps)["deps"]
        from_stages = [dep for dep in deps if dep in written and written[dep] != "code_files"]
        assert from_stages == [read.path for read in node.reads if read.path in written], node.stage


def test_the_configured_graph_walks_an_ensembles_members_before_it() -> None:
    params = compose(())
    members = {item["method"] for item in params["ensemble"]["members"]}
    assert members, "the default ensemble has members"
    plain = {node.stage for node in pipeline_graph().steps_for("ensemble")}
    configured = pipeline_graph().configured(setting_of(params))
    steps = [node.stage for node in configured.steps_for("ensemble")]
    for method in members:
        assert f"aggregate_{method}" in steps and f"aggregate_{method}" not in plain
        assert steps.index(f"aggregate_{method}") < steps.index("members_ensemble") < steps.index("aggregate_ensemble")
    assert steps[0] == "generate"


def test_the_configured_correction_reads_the_methods_its_settings_name() -> None:
    params = compose(("correction.sentence_method=selfcheck_ngram",))
    correct = pipeline_graph().configured(setting_of(params)).nodes["correct"]
    fact_method = params["correction"]["fact_method"]
    assert {read.stage for read in correct.reads} >= {"aggregate_selfcheck_ngram", f"aggregate_{fact_method}"}
    template = pipeline_graph().nodes["correct"]
    assert "aggregate_${correction.sentence_method}" in template.read_stages


def test_every_method_and_artifact_has_its_nodes() -> None:
    graph = pipeline_graph()
    for name in registry.methods():
        assert f"aggregate_{name}" in graph.nodes
        assert "metrics" in graph.nodes[f"aggregate_{name}"].writes  # the aggregate stage evaluates
    for name in registry.artifacts():
        assert graph.nodes[f"extract_{name}"].writes == outputs_of("artifact", name)
