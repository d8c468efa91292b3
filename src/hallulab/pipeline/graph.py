"""The pipeline as one graph, built from the registry: every reader of its shape reads this.

Every stage of ``dvc.yaml`` is a node, in the file's order::

    code_files, data_files, train_nli, source -> prepare -> generate -> extract_<artifact>
        -> score_<method> -> (members_<method>) -> aggregate_<method>
        -> (curve@<method>, knob_curve_<method>) -> correct -> summary

A method's aggregate stage also evaluates its unit scores (its metrics at every labelled level):
one stage per method for the cheap arithmetic, so a sweep point runs one process per method it
touches and ``dvc.lock`` keeps one entry for both.

Each node declares its command and code, what its step reads (params, prompt files, other
files: :class:`~hallulab.pipeline.spec.StepInputs`), the outputs of other nodes it reads
(:class:`~hallulab.pipeline.stage_outputs.Read`) and what it writes
(:func:`~hallulab.pipeline.stage_outputs.outputs_of`), whether its model work can be sharded
and how its calls are counted. :mod:`hallulab.dag.dvcgen` renders ``dvc.yaml`` from the nodes
alone (deps: the node's code manifest, files, prompts, then the outputs it reads);
:class:`hallulab.api.Detector` walks :meth:`PipelineGraph.steps_for` of the graph
:meth:`~PipelineGraph.configured` with its settings (an ensemble's members and the correction's
methods are chosen by settings, so their edges are known once the settings are);
:mod:`hallulab.pipeline.sharding` and ``dvcgen --shards`` split
:meth:`PipelineGraph.sharded_stages`, and ``hallulab plan`` counts each node's
:class:`~hallulab.pipeline.spec.CallCount`. Nothing here is typed by method name: a new method
package is a new set of nodes.

The one input that is not an artifact's: ``main_tokens`` (:data:`GENERATED`), the white-box
record of each regenerated main response, which the generate step writes and the
``response_tokens`` artifact reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from hallulab.pipeline import paths, registry
from hallulab.pipeline.spec import (
    NO_MODEL_CALLS,
    ArtifactSpec,
    CallCount,
    MethodSpec,
    StepInputs,
)
from hallulab.pipeline.stage_inputs import CORRECTION_ARTIFACT, CORRECTION_INPUTS, GENERATE_INPUTS
from hallulab.pipeline.stage_outputs import Output, Read, outputs_of, stage_name

#: what the generate step writes besides the records that an artifact may require
GENERATED = ("main_tokens",)
#: the generate step's calls: main responses and N_max samples per record (``generate.mode``)
GENERATE_CALLS = CallCount("llm_generate")
#: the correction's calls: rewrites and judge verdicts that follow the detection scores
CORRECTION_CALLS = CallCount("unplanned", "its rewrites follow the detection scores")

KINDS = (
    "code_files",
    "data_files",
    "train_nli",
    "source",
    "prepare",
    "generate",
    "artifact",
    "score",
    "members",
    "aggregate",
    "curve",
    "knob_curve",
    "correct",
    "summary",
)
#: the kinds of node that turn records into unit scores: what the API runs for a method
RECORD_KINDS = ("generate", "artifact", "score", "members", "aggregate")

#: the settings that choose the correction's two methods (their unit scores are its inputs)
CORRECTION_METHODS = ("correction.sentence_method", "correction.fact_method")

_SETTING = re.compile(r"^\$\{([^}]+)\}$")


@dataclass(frozen=True)
class StageCode:
    """The code a stage runs: ``stages/<script>.py`` and the hallulab modules it imports by name
    (a method's or an artifact's step); ``key`` names its manifest (the stage, or a ``foreach``
    stage's template name)."""

    key: str
    script: str
    modules: tuple[str, ...] = ()


@dataclass(frozen=True)
class Node:
    """One stage of ``dvc.yaml``: a plain stage, one item of a ``foreach`` stage
    (``curve@<method>``), or, in :attr:`PipelineGraph.definitions`, the ``foreach`` stage
    itself with ``${item}`` in its strings."""

    stage: str  #: its DVC stage name
    kind: str  #: one of :data:`KINDS`
    name: str = ""  #: the artifact's or method's name ("" for the stages of the whole run)
    command: str = ""  #: the command line, after the environment every stage shares
    code: StageCode | None = None
    inputs: StepInputs = field(default_factory=StepInputs)
    reads: tuple[Read, ...] = ()  #: the outputs of other nodes it reads, in its deps' order
    writes: Mapping[str, Output] = field(default_factory=dict)
    foreach: str | tuple[str, ...] | None = None  #: a ``foreach`` stage's items (or the setting holding them)
    always_changed: bool = False
    shards: bool = False  #: its first batched model request can be split into shards
    calls: CallCount = NO_MODEL_CALLS

    @property
    def read_stages(self) -> tuple[str, ...]:
        """The stages whose outputs it reads, each once."""
        return tuple(dict.fromkeys(read.stage for read in self.reads))


def _producer(required: str) -> Read:
    """The output holding an input a step requires: an artifact's, or the generate step's."""
    if required in GENERATED:
        return Read("generate", required)
    return Read("artifact", "artifact", required)


def required_path(required: str, dataset: str = paths.DS) -> str:
    """The file of an input a step requires: an artifact's, or the generate step's main tokens."""
    return _producer(required).path.replace(paths.DS, dataset)


def required_suffix(required: str) -> str:
    """How an input a step requires is stored: an artifact's suffix ("" for JSON lines)."""
    return "" if required in GENERATED else registry.artifact(required).suffix


def _data_files(inputs: StepInputs) -> tuple[Read, ...]:
    """The fingerprints of the data-root files a step reads (the ``data_files`` stage's)."""
    return tuple(Read("data_files", group) for group in inputs.data_files)


def _artifact_packages(requires: tuple[str, ...]) -> tuple[str, ...]:
    """The packages of the artifacts a step reads: the runner imports each one (its SPEC names
    the file suffix) before the step runs."""
    return tuple(f"hallulab.artifacts.{name}" for name in requires if name not in GENERATED)


#: the name a ``foreach`` stage over the methods gives each item (its stage: the kind alone)
ITEM = "${item}"


def _node(kind: str, name: str = "", **fields: Any) -> Node:
    stage = kind if name == ITEM else stage_name(kind, name)
    return Node(stage, kind, name, writes=outputs_of(kind, name), **fields)


def _run_nodes() -> list[Node]:
    """The stages before the records' steps: data fingerprints, the offline NLI model, the data."""
    return [
        _node(
            "data_files",
            command="python stages/data_files.py",
            inputs=StepInputs(
                params=("nli_train.sources", "nli_train.heldout_sets", "concepts.word_list", "concepts.word_list_file")
            ),
            always_changed=True,
        ),
        _node(
            "train_nli",
            command=f"python stages/train_nli.py --out {outputs_of('train_nli')['model'].path}"
            f" --metrics {outputs_of('train_nli')['heldout'].path}",
            code=StageCode("train_nli", "train_nli"),
            inputs=StepInputs(params=("nli_train",)),
            reads=(Read("data_files", "nli_corpora"),),
        ),
        _node(
            "source",
            command=f"python stages/source.py --out {outputs_of('source')['source'].path}",
            inputs=StepInputs(params=("dataset",)),
            always_changed=True,
        ),
        _node(
            "prepare",
            command="python stages/prepare.py --dataset ${dataset.name}",
            code=StageCode("prepare", "prepare"),
            inputs=StepInputs(params=("dataset",)),
            reads=(Read("source", "source"),),
        ),
        _node(
            "generate",
            command="python stages/generate.py --dataset ${dataset.name}",
            code=StageCode("generate", "generate"),
            inputs=GENERATE_INPUTS,
            reads=(Read("prepare", "prepared"),),
            shards=True,
            calls=GENERATE_CALLS,
        ),
    ]


def _artifact_node(spec: ArtifactSpec) -> Node:
    modules = (f"hallulab.artifacts.{spec.name}", f"hallulab.artifacts.{spec.name}.build")
    return _node(
        "artifact",
        spec.name,
        command=f"python stages/extract.py --artifact {spec.name} --dataset ${{dataset.name}}",
        code=StageCode(f"extract_{spec.name}", "extract", (*modules, *_artifact_packages(spec.requires))),
        inputs=spec.inputs,
        reads=(*_data_files(spec.inputs), Read("generate", "records"), *map(_producer, spec.requires)),
        shards=spec.shards,
        calls=spec.calls,
    )


def _members_node(spec: MethodSpec, setting: str) -> Node:
    """A combining method's members step: a ``foreach`` over the member list in its settings,
    each item copying one member's unit scores, so the combiner depends on exactly its members."""
    combiner, method, variant = spec.name, "${item.method}", "${item.variant}"
    return _node(
        "members",
        combiner,
        command=f"python stages/member.py --combiner {combiner} --method {method} --variant {variant}"
        " --dataset ${dataset.name}",
        # hallulab.methods: the registry lists the method packages (imports the package only)
        code=StageCode(f"members_{combiner}", "member", ("hallulab.methods",)),
        inputs=StepInputs(params=(f"{combiner}.level",)),
        reads=(Read("aggregate", "unit_scores", method),),
        foreach=f"${{{setting}}}",
    )


def _method_nodes(spec: MethodSpec) -> Iterator[Node]:
    package = f"hallulab.methods.{spec.name}"
    records = (Read("generate", "records"), *map(_producer, spec.requires))
    steps: tuple[Read, ...] = ()  # the outputs of the method's own earlier steps
    if spec.score is not None:
        yield _node(
            "score",
            spec.name,
            command=f"python stages/score.py --method {spec.name} --dataset ${{dataset.name}}",
            code=StageCode(
                f"score_{spec.name}", "score", (package, f"{package}.score", *_artifact_packages(spec.requires))
            ),
            inputs=spec.score,
            reads=(*_data_files(spec.score), *records),
            shards=spec.shards,
            calls=spec.calls if spec.calls is not None else NO_MODEL_CALLS,
        )
        steps = (Read("score", "raw", spec.name),)
    if spec.combines is not None:
        yield _members_node(spec, spec.combines)
        steps = (*steps, Read("members", "members", spec.name))
    yield _node(
        "aggregate",
        spec.name,
        command=f"python stages/aggregate.py --method {spec.name} --dataset ${{dataset.name}}",
        code=StageCode(
            f"aggregate_{spec.name}", "aggregate", (package, f"{package}.aggregate", *_artifact_packages(spec.requires))
        ),
        # the method's cheap knobs, then the evaluation protocol of its metrics
        inputs=replace(spec.aggregate, params=(*spec.aggregate.params, "evaluate")),
        reads=(*_data_files(spec.aggregate), *records, *steps),
    )


def _curve_node(method: str, methods: tuple[str, ...], foreach: tuple[str, ...] | None = None) -> Node:
    """``curve@<method>``: metrics against N from the stored sample matrices (SelfCheckGPT
    Figure 7/8). Its code is every curve method's package: the script reads the raw scores
    through the method's SPEC, so an edit there must re-run the curves."""
    return _node(
        "curve",
        method,
        command=f"python stages/curve.py --method {method} --dataset ${{dataset.name}}",
        code=StageCode("curve", "curve", tuple(f"hallulab.methods.{name}" for name in methods)),
        inputs=StepInputs(params=("evaluate",)),
        reads=(Read("generate", "records"), Read("score", "raw", method)),
        foreach=foreach,
    )


def _knob_curve_node(method: str, knob: str) -> Node:
    return _node(
        "knob_curve",
        method,
        command=f"python stages/knob_curve.py --method {method} --dataset ${{dataset.name}} --knob {knob}",
        code=StageCode(f"knob_curve_{method}", "knob_curve", ("hallulab.methods",)),
        reads=(Read("aggregate", "metrics", method), Read("aggregate", "controls", method)),
    )


def _correct_node() -> Node:
    """FactSelfCheck §4.5: rewrites what the two methods the settings name flag."""
    return _node(
        "correct",
        command="python stages/correct.py --dataset ${dataset.name}",
        code=StageCode("correct", "correct", ("hallulab.methods",)),
        inputs=CORRECTION_INPUTS,
        reads=(
            Read("generate", "records"),
            _producer(CORRECTION_ARTIFACT),
            *(Read("aggregate", "unit_scores", f"${{{setting}}}") for setting in CORRECTION_METHODS),
        ),
        calls=CORRECTION_CALLS,
    )


def _summary_node(methods: tuple[str, ...], correction: bool) -> Node:
    reads = [Read("aggregate", key, method) for method in methods for key in ("metrics", "ci", "info")]
    if correction:
        reads.append(Read("correct", "metrics"))
    return _node(
        "summary",
        command="python stages/summary.py --dataset ${dataset.name}",
        code=StageCode("summary", "summary", tuple(f"hallulab.methods.{name}" for name in methods)),
        inputs=StepInputs(params=("profile", "llms", "nli.name", "bertscore.name")),
        reads=tuple(reads),
    )


def _code_files_node(code: list[StageCode]) -> Node:
    """Always runs: rewrites every stage's code manifest (:mod:`hallulab.dag.code_manifests`),
    then checks every setting (:func:`hallulab.pipeline.settings_schema.main`)."""
    keys = sorted({stage_code.key for stage_code in code})
    writes = {key: Output(paths.code_manifest(key), cache=False, persist=True) for key in keys}
    # it imports the DAG generator: named, not imported
    command = "python -m hallulab.dag.code_manifests"
    return Node("code_files", "code_files", command=command, writes=writes, always_changed=True)


@dataclass(frozen=True)
class PipelineGraph:
    """Every stage of ``dvc.yaml``: :attr:`definitions` in the file's order (a ``foreach``
    stage as one node), and :attr:`nodes` by stage name (each ``foreach`` item its own node)."""

    definitions: tuple[Node, ...]
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

    def configured(self, setting: Callable[[str], Any]) -> PipelineGraph:
        """The graph under a run's settings (``setting(key)`` returns a setting's value): the
        reads a setting chooses become edges: the correction's two methods
        (``${correction.sentence_method}``) and a combining method's members (the
        ``foreach`` over ``${ensemble.members}``: one read of each member's unit scores)."""
        nodes = {}
        for stage, node in self.nodes.items():
            reads: list[Read] = []
            for read in node.reads:
                if read.name.startswith("${item.") and isinstance(node.foreach, str):
                    key = _setting_key(node.foreach)
                    items = (setting(key) if key else None) or ()
                    field_name = read.name[len("${item.") : -1]
                    reads.extend(replace(read, name=str(_item_field(item, field_name))) for item in items)
                elif (key := _setting_key(read.name)) is not None:
                    reads.append(replace(read, name=str(setting(key))))
                else:
                    reads.append(read)
            nodes[stage] = replace(node, reads=tuple(dict.fromkeys(reads)))
        return replace(self, nodes=nodes)

    def steps_for(self, method: str) -> list[Node]:
        """The nodes a method's unit scores need, each after the nodes it reads: generate, the
        artifacts in dependency order, then the method's own score, members and aggregate. A
        combining method's members are other methods' steps, chosen by its settings: in a
        :meth:`configured` graph they come before its members step; in the graph of no
        settings its members step reads nothing yet."""
        ordered: dict[str, Node] = {}

        def visit(stage: str) -> None:
            node = self.nodes.get(stage)
            if stage in ordered or node is None or node.kind not in RECORD_KINDS:
                return
            for read in node.read_stages:
                visit(read)
            ordered[stage] = node

        registry.check_method_name(method)
        visit(stage_name("aggregate", method))
        return list(ordered.values())


def _setting_key(template: str) -> str | None:
    """``correction.sentence_method`` for ``${correction.sentence_method}``; None for a plain name."""
    match = _SETTING.match(template)
    return match.group(1) if match and not match.group(1).startswith("item") else None


def setting_of(params: Mapping[str, Any]) -> Callable[[str], Any]:
    """A reader of composed settings by dotted key, for :meth:`PipelineGraph.configured`."""

    def setting(key: str) -> Any:
        value: Any = params
        for part in key.split("."):
            value = value[part]
        return value

    return setting


def _item_field(item: Any, name: str) -> Any:
    return item[name] if isinstance(item, Mapping) else getattr(item, name)


@cache
def pipeline_graph() -> PipelineGraph:
    """The graph of every registered method and artifact, under no settings."""
    methods, artifacts = registry.methods(), registry.artifacts()
    definitions: list[Node] = [*_run_nodes(), *(_artifact_node(spec) for spec in artifacts.values())]
    for spec in methods.values():
        definitions.extend(_method_nodes(spec))
    names = tuple(methods)
    curves = tuple(name for name, spec in methods.items() if spec.sample_curve)
    if curves:
        definitions.append(_curve_node(ITEM, curves, foreach=curves))
    for name, spec in methods.items():
        if spec.knob_curve:
            definitions.append(_knob_curve_node(name, spec.knob_curve))
    corrects = any(spec.corrects_facts for spec in methods.values()) and CORRECTION_ARTIFACT in artifacts
    if corrects:
        definitions.append(_correct_node())
    definitions.append(_summary_node(names, corrects))
    definitions.insert(0, _code_files_node([node.code for node in definitions if node.code is not None]))
    nodes: dict[str, Node] = {}
    for node in definitions:  # a foreach stage's items in its place (a members step stays one node)
        if node.kind == "curve":
            nodes.update((item.stage, item) for item in (_curve_node(name, curves) for name in curves))
        else:
            nodes[node.stage] = node
    return PipelineGraph(tuple(definitions), nodes, methods, artifacts)
