"""What each kind of pipeline node writes, by key: the one place an output's path is stated.

A node of :mod:`hallulab.pipeline.graph` writes :func:`outputs_of` its kind and name, and a node
that reads another names the producer and the output's key (:class:`Read`); the path it depends
on is looked up here, so a reader and its producer cannot disagree on a file. ``dvc.yaml`` is
rendered from the same declarations (:mod:`hallulab.dag.dvcgen`): a plain output is a cached
``outs`` entry, ``cache=False`` keeps it in git, ``section`` moves it under ``metrics`` or
``plots``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from hallulab.core.data_files import DATA_FILE_GROUPS
from hallulab.pipeline import paths, registry

#: how a node of each kind is named in ``dvc.yaml`` (a curve item as ``curve@<method>``)
STAGE_NAMES = {
    "artifact": "extract_{}",
    "score": "score_{}",
    "members": "members_{}",
    "aggregate": "aggregate_{}",
    "curve": "curve@{}",
    "knob_curve": "knob_curve_{}",
}


def stage_name(kind: str, name: str = "") -> str:
    """The stage a node of ``kind`` (for the method or artifact ``name``) is in ``dvc.yaml``."""
    return STAGE_NAMES[kind].format(name) if kind in STAGE_NAMES else kind


@dataclass(frozen=True)
class Plot:
    """How ``dvc plots`` draws a plot output: its axes, template (``conf/plots/``) and title."""

    x: str
    y: str
    template: str
    title: str


@dataclass(frozen=True)
class Output:
    """One file or folder a node writes."""

    path: str
    cache: bool = True  #: False: kept in git, not in DVC's cache
    persist: bool = False  #: kept when the stage runs again
    section: Literal["outs", "metrics", "plots"] = "outs"
    plot: Plot | None = None
    #: False: not listed in ``dvc.yaml`` (a folder DVC knows through its ``foreach`` items' files)
    listed: bool = True


@dataclass(frozen=True)
class Read:
    """An output of another node that a node reads: the producer's kind and name, and the key
    of the output (:func:`outputs_of`). ``name`` may be a template (``${item}``, or a setting
    such as ``${correction.sentence_method}``), resolved by DVC and by
    :meth:`hallulab.pipeline.graph.PipelineGraph.configured`."""

    kind: str
    output: str
    name: str = ""

    @property
    def stage(self) -> str:
        return stage_name(self.kind, self.name)

    @property
    def path(self) -> str:
        return outputs_of(self.kind, self.name)[self.output].path


def _untracked(path: str) -> Output:
    return Output(path, cache=False)


def _metric(path: str) -> Output:
    return Output(path, cache=False, section="metrics")


def _plot(path: str, x: str, y: str, template: str, title: str) -> Output:
    return Output(path, cache=False, section="plots", plot=Plot(x, y, f"conf/plots/{template}", title))


def outputs_of(kind: str, name: str = "") -> Mapping[str, Output]:
    """What a node of ``kind`` for ``name`` writes, by key, in ``dvc.yaml``'s order (an
    artifact's file suffix and a knob curve's knob are its spec's). The ``code_files`` stage's
    manifests follow the other stages' code: the graph lists them."""
    if kind == "data_files":
        return {group: _untracked(paths.data_files(group)) for group in DATA_FILE_GROUPS}
    if kind == "train_nli":
        return {"model": Output(paths.NLI_MODEL_DIR), "heldout": _metric(paths.NLI_HELDOUT)}
    if kind == "source":
        return {"source": _untracked(paths.prepared().replace("passages.jsonl", "source.json"))}
    if kind == "prepare":
        return {"prepared": Output(paths.prepared()), "provenance": _untracked(paths.provenance())}
    if kind == "generate":
        return {
            "records": Output(paths.records()),
            "main_tokens": Output(paths.main_tokens()),
            "report": Output(paths.generate_report()),
        }
    if kind == "artifact":
        return {"artifact": Output(paths.artifact(name, registry.artifact(name).suffix))}
    if kind == "score":
        return {"raw": Output(paths.raw_scores(name))}
    if kind == "members":
        # one file per item of the foreach over the member list, in the folder the combiner reads
        return {
            "member": Output(paths.member_scores(name, "${item.method}", "${item.variant}")),
            "members": Output(paths.members_dir(name), listed=False),
        }
    if kind == "aggregate":  # the unit scores, then their metrics (the stage evaluates them)
        return {
            "unit_scores": Output(paths.unit_scores(name)),
            "diagnostics": Output(paths.diagnostics(name)),
            "controls": Output(paths.controls(name)),
            "unit_details": Output(paths.unit_details(name)),
            "metrics": _metric(paths.metrics(name)),
            "ci": _metric(paths.metrics(name, "ci")),
            "info": _metric(paths.metrics(name, "info")),
            "pr": _plot(
                paths.pr_curves(name),
                "recall",
                "precision",
                "pr_by_task.json",
                f"{name}: precision-recall by task and variant",
            ),
        }
    if kind == "curve":
        return {
            "n_curve": _plot(
                paths.n_curve(name),
                "num_samples",
                "value",
                "n_curve.json",
                f"{name}: performance against the number of samples N (SelfCheckGPT Figure 7/8)",
            )
        }
    if kind == "knob_curve":
        knob = registry.method(name).knob_curve
        title = f"{name}: performance against {knob}"
        return {"knob_curve": _plot(paths.knob_curve(name), str(knob), "value", "knob_curve.json", title)}
    if kind == "correct":
        return {"corrections": Output(paths.corrections()), "metrics": _metric(paths.correction_metrics())}
    if kind == "summary":
        return {"md": _untracked(paths.summary(suffix="md")), "csv": _untracked(paths.summary(suffix="csv"))}
    raise KeyError(f"no outputs declared for a node of kind {kind!r}")
