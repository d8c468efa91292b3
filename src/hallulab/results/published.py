"""Published results: one committed file per run the README reports, with what re-derives it.

A run on a real data set (``make experiment ...``) writes ``metrics/<dataset>/<method>*.json``
into the workspace, next to a ``params.yaml`` and ``dvc.lock`` that describe that run only.
Publishing gathers them into ``results/<dataset>/<name>.json``:

* ``command``: the command that produced the metrics (as given, e.g. the ``make experiment``
  line), the git revision of the code and whether the working tree had uncommitted changes;
* ``params``: the resolved parameter sections the run read (data set, profile, evaluation,
  the method's own sections) and ``overrides``, the ``-S`` settings of the command;
* ``models``: every LLM role the method and its artifacts use, by catalogue entry, model name
  and the sha256 of the weights file where the weights are a local file (the packaged GGUF);
* ``metrics`` / ``intervals``: variant -> metric (percent; null = undefined) and its bootstrap
  interval, exactly as the evaluation wrote them;
* ``counts``, ``undefined``, ``random_baselines``, ``diagnostics``: the evaluation's
  record counts, the reason of every null, the random scorer's value at each level, and the
  method's own diagnostics (malformed replies, decision paths, Table 8-style statistics);
* ``environment``: the lock files' digest, whether the installed packages match them, and the
  torch and Python versions (:mod:`hallulab.tooling.environment`), read by the publishing process, which
  runs in the environment the experiment ran in (``make result`` runs both); null in results
  published before the environment was locked;
* ``paired`` (a combining method only): each of its variants against each member, the paired
  bootstrap difference of every metric.

CLI::

    python -m hallulab.results publish --dataset wikibio --method factselfcheck \\
        --name factselfcheck_llm3 --args '-S ...' --command 'make result ...' [--params params.yaml]

``make result DATASET=... METHOD=... NAME=... ARGS='-S ...'`` runs the experiment and publishes it,
then names the files the run left describing itself (``python -m hallulab.results run-files``:
``params.yaml`` and ``dvc.lock``, :mod:`hallulab.results.run_files`) with the command that restores them;
``METHOD=correction`` runs the ``correct`` stage and publishes FactSelfCheck's Table 3
(:func:`collect_correction`). ``make nli-result NLI_PROFILE=paper`` trains the offline NLI
model with that profile's recipe and publishes its held-out accuracy as
``results/nli_model/heldout_<recipe>.json`` (:func:`collect_nli_model`).

    python -m hallulab.results import-kept --from docs/results/wikibio --dataset wikibio \
        --method selfcheck_nli --name selfcheck_nli --command 'make wikibio ...' --revision <commit>

turns the evaluate files an earlier run kept in the repository into a results file whose
``provenance`` says so (for runs too long to repeat here).
"""

from __future__ import annotations

import argparse
import itertools
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from hallulab.core.config import load_params
from hallulab.core.io import file_sha256, read_json, write_json
from hallulab.core.package_files import find_package_file
from hallulab.pipeline import paths
from hallulab.pipeline.graph import pipeline_graph
from hallulab.pipeline.spec import StepInputs
from hallulab.pipeline.stage_inputs import CORRECTION_INPUTS
from hallulab.results.run_files import note
from hallulab.tooling.environment import EnvironmentRef, current

RESULTS_DIR = "results"
#: what ``git_dirty`` looks at: the code, the configs and the files that define the environment
CODE_AND_ENVIRONMENT = ("src", "stages", "conf", "pyproject.toml", "requirements.lock", "requirements-reference.lock")
#: params sections every result records besides the method's own
COMMON_SECTIONS = ("dataset", "profile", "evaluate")


@dataclass(frozen=True)
class ModelRef:
    """The model behind one LLM role of a run."""

    role: str
    entry: str  # the llm_catalogue entry
    name: str  # the model's name in the catalogue
    backend: str
    source: str  # hub id, package file or server URL
    sha256: str  # of the local weights file; "" where the weights are not a local file


@dataclass(frozen=True)
class PublishedResult:
    """One published run of one method on one data set."""

    name: str
    dataset: str
    method: str
    command: str
    git_revision: str
    git_dirty: bool
    overrides: list[str]
    params: dict[str, Any]
    models: list[ModelRef]
    metrics: dict[str, dict[str, float | None]]
    intervals: dict[str, dict[str, list[float | None]]]
    counts: dict[str, Any]
    undefined: dict[str, Any] = field(default_factory=dict)
    random_baselines: dict[str, Any] = field(default_factory=dict)
    diagnostics: dict[str, Any] = field(default_factory=dict)
    #: what the method's aggregate step chose for later stages (its own thresholds, headline
    #: variants, knob points: :class:`hallulab.pipeline.controls.AggregateControls`)
    controls: dict[str, Any] = field(default_factory=dict)
    #: a combining method's paired differences against its members: level -> variant ->
    #: member variant -> metric -> [difference, low, high] (:mod:`hallulab.evaluation.paired`)
    paired: dict[str, Any] = field(default_factory=dict)
    #: "" for a run published from the workspace; else where the metrics came from (the kept
    #: evaluate files of an earlier run, see ``import-kept``) and what is not known about it
    provenance: str = ""
    environment: EnvironmentRef | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> PublishedResult:
        fields = dict(raw)
        fields["models"] = [ModelRef(**model) for model in raw.get("models", [])]
        if raw.get("environment") is not None:
            fields["environment"] = EnvironmentRef(**raw["environment"])
        return cls(**fields)


def result_path(dataset: str, name: str, root: Path = Path(".")) -> Path:
    return root / RESULTS_DIR / dataset / f"{name}.json"


def load_result(path: str | Path) -> PublishedResult:
    return PublishedResult.from_dict(read_json(path))


def _inputs(method: str) -> list[StepInputs]:
    """What the method's steps and the artifacts they build on (transitively) read: its steps in
    the pipeline graph, the generate step aside (the run's settings are recorded whole)."""
    return [node.inputs for node in pipeline_graph().steps_for(method) if node.kind != "generate"]


def _roles(method: str) -> list[str]:
    """LLM roles the method's steps and its artifacts may read (an artifact's settings, recorded
    beside them, say whether it called its role: e.g. ``knowledge_graphs.extractor: spacy``)."""
    return sorted({role for step in _inputs(method) for role in step.llm_roles})


def _sections(method: str) -> list[str]:
    """Top-level params sections the method and its artifacts read, and the common ones."""
    keys = {key.split(".")[0] for step in _inputs(method) for key in (*step.params, *step.prompts)}
    return [*COMMON_SECTIONS, *sorted(keys - set(COMMON_SECTIONS))]


def _model(role: str, params: DictConfig) -> ModelRef:
    entry_name = str(params.llms[role])
    entry = params.llm_catalogue[entry_name]
    source, digest = "", ""
    if entry.get("gguf_package"):
        weights = find_package_file(str(entry.gguf_package), str(entry.get("gguf_file") or "*.gguf"))
        source, digest = f"{entry.gguf_package}/{weights.name}", file_sha256(weights)
    elif entry.get("model_id"):
        source = f"{entry.model_id}@{entry.get('revision') or 'main'}"
    elif entry.get("base_url"):
        source = str(entry.base_url)
    return ModelRef(role, entry_name, str(entry.get("name", entry_name)), str(entry.get("backend", "")), source, digest)


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def _code_changed() -> bool:
    """Whether the checkout's code, configs or environment files differ from its revision."""
    return bool(_git("status", "--porcelain", "--untracked-files=no", "--", *CODE_AND_ENVIRONMENT))


def _resolved(params: DictConfig) -> dict[str, Any]:
    """The params with every interpolation resolved, by section name."""
    resolved = OmegaConf.to_container(params, resolve=True)
    assert isinstance(resolved, dict)
    return {str(section): value for section, value in resolved.items()}


def _provenance(name: str, command: str, overrides: Sequence[str]) -> dict[str, Any]:
    """The fields every kind of published result records about the run that made it."""
    return {
        "name": name,
        "command": command,
        "git_revision": _git("rev-parse", "HEAD"),
        "git_dirty": _code_changed(),
        "overrides": list(overrides),
        "environment": current(),
    }


def collect(
    dataset: str, method: str, name: str, command: str, overrides: Sequence[str], params: DictConfig
) -> PublishedResult:
    """The run's metrics (as the evaluation wrote them in the workspace) with its provenance."""
    info = read_json(paths.metrics(method, "info", dataset))
    resolved = _resolved(params)
    return PublishedResult(
        **_provenance(name, command, overrides),
        dataset=dataset,
        method=method,
        params={section: resolved.get(section) for section in _sections(method)},
        models=[_model(role, params) for role in _roles(method)],
        metrics=read_json(paths.metrics(method, "", dataset)),
        intervals=read_json(paths.metrics(method, "ci", dataset)),
        counts=info.get("levels", {}),
        undefined=info.get("undefined", {}),
        random_baselines=info.get("random_baselines", {}),
        diagnostics=info.get("diagnostics", {}),
        controls=info.get("controls", {}),
        paired=info.get("paired", {}),
    )


#: the ``method`` of a published correction table (the ``correct`` stage; not a registered method)
CORRECTION = "correction"
#: the rows of the judge's first-token P(No) reading: ``baseline_p_no``, ``sentence_p_no``, ``fact_p_no``
P_NO_SUFFIX = "_p_no"


def _percent(key: str, value: float | None) -> float | None:
    """A verdict share as percent (two decimals); a relative change is percent already."""
    if value is None or key.endswith("_change_percent"):
        return value
    return round(value * 100, 2)


def _correction_nulls(metrics: Mapping[str, Mapping[str, float | None]]) -> dict[str, dict[str, str]]:
    """The reason of every null in a Table 3: the baseline has no change to itself; a level
    without judged sentences has no shares; a change from a zero baseline share is undefined."""
    reasons: dict[str, dict[str, str]] = {}
    for level, row in metrics.items():
        for key, value in row.items():
            if value is not None:
                continue
            if key.endswith("_change_percent"):
                baseline = level.removesuffix(P_NO_SUFFIX) == "baseline"
                reason = "baseline_row" if baseline else "baseline_share_zero_or_undefined"
            else:
                reason = "no_judged_sentences"
            reasons.setdefault(level, {})[key] = reason
    return reasons


def collect_correction(
    dataset: str, name: str, command: str, overrides: Sequence[str], params: DictConfig
) -> PublishedResult:
    """FactSelfCheck's Table 3 as the ``correct`` stage wrote it (``metrics/<dataset>/correction.json``):
    ``metrics`` is row (``baseline``, then ``sentence`` and ``fact`` under each threshold reading:
    ``*_released``, Table 3's rule on the evaluated labels, and ``*_dev``, this project's
    development split; :data:`hallulab.correction.run.ROWS`) -> the share of each judged verdict in
    percent and its relative change to the baseline, and ``<row>_p_no`` the same from the judge's
    first-token P(No) reading where the judge is white-box; ``counts`` the development and test passages;
    ``diagnostics`` the detectors, both readings' thresholds and the unparseable verdicts.
    The models are the corrector and the judge and every role the two detectors read."""
    written = read_json(paths.correction_metrics(dataset))
    resolved = _resolved(params)
    detectors = [str(params.correction.fact_method), str(params.correction.sentence_method)]
    sections = sorted({CORRECTION, *(s for m in detectors for s in _sections(m))} - set(COMMON_SECTIONS))
    roles = sorted({*CORRECTION_INPUTS.llm_roles, *(r for m in detectors for r in _roles(m))})
    counts_keys = ("dev_passages", "test_passages")
    metrics = {
        level: {key: _percent(key, value) for key, value in row.items()} for level, row in written["table3"].items()
    }
    for level, row in (written.get("table3_p_no") or {}).items():  # the judge's format-free reading
        metrics[f"{level}{P_NO_SUFFIX}"] = {key: _percent(key, value) for key, value in row.items()}
    return PublishedResult(
        **_provenance(name, command, overrides),
        dataset=dataset,
        method=CORRECTION,
        params={section: resolved.get(section) for section in [*COMMON_SECTIONS, *sections]},
        models=[_model(role, params) for role in roles],
        metrics=metrics,
        intervals={},
        undefined={"metrics": _correction_nulls(metrics)},
        counts={key: written[key] for key in counts_keys if key in written},
        diagnostics={
            key: value for key, value in written.items() if not key.startswith("table3") and key not in counts_keys
        },
    )


#: the ``dataset`` and ``method`` of a published offline NLI model (the ``train_nli`` stage)
NLI_MODEL = "nli_model"


def _model_card_title(model_dir: Path, fallback: str) -> str:
    """The model's name as its card states it: the first level-one heading of the folder's
    README.md after the YAML front matter (``# all-MiniLM-L6-v2``), else ``fallback``."""
    card = model_dir / "README.md"
    if not card.is_file():
        return fallback
    lines = card.read_text(encoding="utf-8", errors="replace").splitlines()
    if lines and lines[0].strip() == "---":  # front matter: a YAML comment there is no heading
        closing = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), 0)
        lines = lines[closing + 1 :]
    return next((line[2:].strip() for line in lines if line.startswith("# ")), fallback)


def _encoder(params: DictConfig) -> ModelRef:
    """The packaged encoder the NLI model is fine-tuned from, named by its model card and
    identified by the sha256 of its weights."""
    recipe = params.nli_train
    package = recipe.get("encoder_package")
    if not package:
        return ModelRef("encoder", str(recipe.encoder), str(recipe.encoder), "transformers", str(recipe.encoder), "")
    weights = find_package_file(str(package), f"{recipe.encoder}/model.safetensors")
    return ModelRef(
        "encoder",
        str(package),
        _model_card_title(weights.parent, str(package)),
        "transformers",
        f"{package}/{recipe.encoder}",
        file_sha256(weights),
    )


def collect_nli_model(name: str | None, command: str, overrides: Sequence[str], params: DictConfig) -> PublishedResult:
    """The offline NLI model's held-out accuracy as ``train_nli`` wrote it: ``metrics`` is
        ``minilm_offline_<recipe>`` -> accuracy (percent) per held-out set and the ANLI mean (when
    the recipe evaluates all three ANLI rounds);
        ``counts`` the held-out pairs per set (null: every pair) and the training pairs per source.
        Without a ``name`` the result is named ``heldout_<recipe>``."""
    written = read_json(paths.NLI_HELDOUT)
    resolved = _resolved(params)
    train = dict(written.get("train", {}))
    return PublishedResult(
        **_provenance(name or f"heldout_{written['profile']}", command, overrides),
        dataset=NLI_MODEL,
        method=NLI_MODEL,
        params={"profile": resolved.get("profile"), "nli_train": resolved.get("nli_train")},
        models=[_encoder(params)],
        metrics={
            f"minilm_offline_{written['profile']}": {
                **written["heldout_accuracy"],
                **({"anli_mean_accuracy": written["anli_mean_accuracy"]} if "anli_mean_accuracy" in written else {}),
            }
        },
        intervals={},
        counts={
            "heldout_pairs_per_set": written.get("heldout_pairs_per_set"),
            "train_pairs": train.pop("by_source", {}),
        },
        diagnostics={"train": train},
    )


def _without_machine_paths(identity: Mapping[str, Any]) -> dict[str, Any]:
    """An identity whose packaged-model paths name the package's folder, not where the earlier
    run's environment happened to be installed (``pkg//…/site-packages/pkg/model`` → ``pkg/model``)."""
    cleaned: dict[str, Any] = {}
    for key, value in identity.items():
        if isinstance(value, str) and "/site-packages/" in value:
            value = value.split("/site-packages/", 1)[1]
        cleaned[key] = value
    return cleaned


def import_kept(folder: Path, dataset: str, method: str, name: str, command: str, revision: str) -> PublishedResult:
    """A result from the evaluate files an earlier run kept in the repository (``<method>.json``,
    ``.ci.json``, ``.info.json``), for a run too long to repeat for every release (the WikiBio NLI
    run: training the full offline model, then scoring every passage). ``revision`` is the commit that
    added those files; params and models are not known beyond what the info file records."""
    info = read_json(folder / f"{method}.info.json")
    diagnostics = info.get("diagnostics", {})
    identity = _without_machine_paths(diagnostics.get("identity", {}))
    return PublishedResult(
        name=name,
        dataset=dataset,
        method=method,
        command=command,
        git_revision=_git("rev-parse", revision) or revision,
        git_dirty=False,
        overrides=[],
        params={},
        models=[],
        metrics=read_json(folder / f"{method}.json"),
        intervals=read_json(folder / f"{method}.ci.json"),
        counts={key: info[key] for key in ("passages", "sentences", "records") if key in info},
        random_baselines={"sentence": info.get("random_baseline", {})},
        diagnostics={"identity": identity, "pairs": diagnostics.get("pairs")},
        provenance=(
            f"imported from {folder.as_posix()}: the evaluate files an earlier run kept, added in commit "
            f"{revision}; that run's params and call log were not kept"
        ),
    )


def overrides_of(command_args: str) -> list[str]:
    """The ``-S key=value`` settings of a command's arguments."""
    words = shlex.split(command_args)
    return [value for flag, value in itertools.pairwise(words) if flag in ("-S", "--set-param")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command_name", required=True)
    publish = sub.add_parser("publish", help="gather a run's metrics and provenance into results/")
    publish.add_argument("--dataset", required=True)
    publish.add_argument(
        "--method",
        required=True,
        help=f"a registered method, {CORRECTION!r} (the correct stage) or {NLI_MODEL!r} (train_nli's held-out set)",
    )
    publish.add_argument(
        "--name",
        help=f"file stem under results/<dataset>/ (required, except for {NLI_MODEL!r}: heldout_<recipe>)",
    )
    publish.add_argument("--command", required=True, help="the command that produced the metrics")
    publish.add_argument("--args", default="", help="that command's settings (-S key=value ...)")
    publish.add_argument("--params", default="params.yaml")
    sub.add_parser("run-files", help="name the files a run left describing itself (params.yaml, dvc.lock)")
    kept = sub.add_parser("import-kept", help="a results file from an earlier run's kept evaluate files")
    kept.add_argument("--from", dest="folder", required=True, help="folder holding <method>.json, .ci.json, .info.json")
    kept.add_argument("--dataset", required=True)
    kept.add_argument("--method", required=True)
    kept.add_argument("--name", required=True)
    kept.add_argument("--command", required=True, help="the command that produced the kept files")
    kept.add_argument("--revision", required=True, help="the commit that added the kept files")
    args = parser.parse_args(argv)
    if args.command_name == "run-files":
        line = note()
        if line:
            print(line)
        return 0
    if args.command_name == "import-kept":
        imported = import_kept(Path(args.folder), args.dataset, args.method, args.name, args.command, args.revision)
        target = result_path(args.dataset, args.name)
        write_json(target, imported.to_dict())
        print(f"imported {target}")
        return 0
    params = load_params(args.params)
    overrides = overrides_of(args.args)
    if args.method == NLI_MODEL:  # not a data set's run: the model every NLI step reads
        result = collect_nli_model(args.name, args.command, overrides, params)
    elif not args.name:
        print(f"hallulab results: error: --name is required for method {args.method!r}", file=sys.stderr)
        return 2
    elif str(params.dataset.name) != args.dataset:
        print(
            f"hallulab results: error: {args.params} is for data set {params.dataset.name!r}, not {args.dataset!r}",
            file=sys.stderr,
        )
        return 2
    elif args.method == CORRECTION:
        result = collect_correction(args.dataset, args.name, args.command, overrides, params)
    else:
        result = collect(args.dataset, args.method, args.name, args.command, overrides, params)
    target = result_path(result.dataset, result.name)
    write_json(target, result.to_dict())
    print(f"published {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
