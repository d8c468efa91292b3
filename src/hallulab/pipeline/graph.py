"""The pipeline as one graph, built from the registry: every reader of its shape reads this.

Nodes, in the order ``dvc.yaml`` lists their stages::

    generate -> extract_<artifact> -> score_<method> -> (members_<method>) -> aggregate_<method>
             -> evaluate@<method>;  correct (when a method declares ``corrects_facts``)

Each node carries what its step reads (:class:`~hallulab.pipeline.spec.StepInputs`), the nodes
whose outputs it reads, whether its model work can be sharded and how its calls are counted.
:mod:`hallulab.dag.dvcgen` renders ``dvc.yaml`` from it, :class:`hallulab.api.Detector` walks
:meth:`PipelineGraph.steps_for` through the executor, :mod:`hallulab.pipeline.sharding` and
``dvcgen --shards`` split :meth:`PipelineGraph.sharded_stages`, and ``hallulab plan`` counts
each node's :class:`~hallulab.pipeline.spec.CallCount`. Nothing here is typed by method name:
a new method package is a new set of nodes.

The one input that is not an artifact's: ``main_tokens`` (:data:`GENERATED`), the white-box
record of each regenerated main response, which the generate step writes and the
``response_tokens`` artifact reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache

from hallulab.pipeline import paths, registry
from hallulab.pipeline.spec import (
    NO_MODEL_CALLS,
    ArtifactSpec,
    CallCount,
    MethodSpec,
    StepInputs,
)
from hallulab.pipeline.stage_inputs import CORRECTION_ARTIFACT, CORRECTION_INPUTS, GENERATE_INPUTS

#: what the generate step writes besides the records that an artifact may require
GENERATED = ("main_tokens",)
#: the generate step's calls: main responses and N_max samples per record (``generate.mode``)
GENERATE_CALLS = CallCount("llm_generate")
#: the correction's calls: rewrites and judge verdicts that follow the detection scores
CORRECTION_CALLS = CallCount("unplanned", "its rewrites follow the detection scores")

KINDS = ("generate", "artifact", "score", "members", "aggregate", "evaluate", "correct")


@dataclass(frozen=True)
class Node:
    """One step of the pipeline (one DVC stage, or one ``foreach`` item)."""

    stage: str  #: its DVC stage name (``evaluate@<method>`` for an evaluate item)
    kind: str  #: one of :data:`KINDS`
    name: str = ""  #: the artifact's or method's name ("" for generate and correct)
    inputs: StepInputs = field(default_factory=StepInputs)
    reads: tuple[str, ...] = ()  #: the stages whose outputs it reads (members' are chosen by params)
    shards: bool = False  #: its first batched model request can be split into shards
    calls: CallCount = NO_MODEL_CALLS


def _producer(required: str) -> str:
    """The stage that writes an input a step requires: an artifact's extract stage, or generate."""
    return "generate" if required in GENERATED else f"extract_{required}"


def required_path(required: str, dataset: str = paths.DS) -> str:
    """The file of an input a step requires: an artifact's, or the generate step's main tokens."""
    if required in GENERATED:
        return paths.main_tokens(dataset)
    return paths.artifact(required, registry.artifact(required).suffix, dataset)


def required_suffix(required: str) -> str:
    """How an input a step requires is stored: an artifact's suffix ("" for JSON lines)."""
    return "" if required in GENERATED else registry.artifact(required).suffix


def _artifact_node(spec: ArtifactSpec) -> Node:
    reads = tuple(dict.fromkeys(["generate", *(_producer(r) for r in spec.requires)]))
    return Node(f"extract_{spec.name}", "artifact", spec.name, spec.inputs, reads, spec.shards, spec.calls)


def _method_nodes(spec: MethodSpec) -> Iterator[Node]:
    artifacts = tuple(_producer(r) for r in spec.requires)
    reads = ("generate", *artifacts)
    if spec.score is not None:
        calls = spec.calls if spec.calls is not None else NO_MODEL_CALLS
        yield Node(f"score_{spec.name}", "score", spec.name, spec.score, reads, spec.shards, calls)
        reads = (*reads, f"score_{spec.name}")
    if spec.combines is not None:
        yield Node(f"members_{spec.name}", "members", spec.name, StepInputs(params=(spec.combines,)))
        reads = (*reads, f"members_{spec.name}")
    yield Node(f"aggregate_{spec.name}", "aggregate", spec.name, spec.aggregate, reads)


@dataclass(frozen=True)
class PipelineGraph:
    """Every node by stage name, in ``dvc.yaml``'s order (see the module docstring)."""

    nodes: dict[str, Node]
    methods: dict[str, MethodSpec]
    artifacts: dict[str, ArtifactSpec]

    def of_kind(self, kind: str) -> list[Node]:
        return [node for node in self.nodes.values() if node.kind == kind]

    def sharded_stages(self) -> tuple[str, ...]:
        """The stages whose model work ``make dvcyaml SHARDS=S`` splits."""
        return tuple(node.stage for node in self.nodes.values() if node.shards)

    @property
    def corrects(self) -> bool:
        """Whether the pipeline has the fact-level correction (a method declares ``corrects_facts``)."""
        return "correct" in self.nodes

    def steps_for(self, method: str) -> list[Node]:
        """The nodes a method's unit scores need, each after the nodes it reads: generate, the
        artifacts in dependency order, then the method's own score, members and aggregate
        (a combining method's members are other methods' steps, chosen by its settings)."""
        ordered: dict[str, Node] = {}

        def visit(stage: str) -> None:
            if stage in ordered:
                return
            node = self.nodes[stage]
            for read in node.reads:
                visit(read)
            ordered[stage] = node

        registry.check_method_name(method)
        visit(f"aggregate_{method}")
        return list(ordered.values())


@cache
def pipeline_graph() -> PipelineGraph:
    """The graph of every registered method and artifact."""
    methods, artifacts = registry.methods(), registry.artifacts()
    nodes: list[Node] = [
        Node("generate", "generate", inputs=GENERATE_INPUTS, shards=True, calls=GENERATE_CALLS),
        *(_artifact_node(spec) for spec in artifacts.values()),
    ]
    for spec in methods.values():
        nodes.extend(_method_nodes(spec))
    nodes.extend(Node(f"evaluate@{name}", "evaluate", name, reads=(f"aggregate_{name}",)) for name in methods)
    fact_methods = [f"aggregate_{name}" for name, spec in methods.items() if spec.corrects_facts]
    if fact_methods and CORRECTION_ARTIFACT in artifacts:
        reads = ("generate", _producer(CORRECTION_ARTIFACT), *fact_methods)
        nodes.append(Node("correct", "correct", inputs=CORRECTION_INPUTS, reads=reads, calls=CORRECTION_CALLS))
    return PipelineGraph({node.stage: node for node in nodes}, methods, artifacts)
