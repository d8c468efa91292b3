"""Where every stage reads and writes, per data set (one place; dvc.yaml is generated from it)."""

from __future__ import annotations

DS = "${dataset.name}"  # the DVC template of the data set's name


def data_files(group: str) -> str:
    """Fingerprint of a group of data-root files a stage reads (:mod:`hallulab.data.fingerprints`)."""
    return f"data/data_files/{group}.json"


#: one manifest per stage: the sha256 of each source file it runs (:mod:`hallulab.dag.code_manifests`)
CODE_MANIFEST_DIR = "data/code_files"


def code_manifest(key: str) -> str:
    """The code manifest a stage depends on instead of its source files."""
    return f"{CODE_MANIFEST_DIR}/{key}.json"


#: the offline NLI model ``train_nli`` writes, and its held-out accuracy per set
NLI_MODEL_DIR = "models/nli_minilm"
NLI_HELDOUT = "metrics/nli_model/heldout.json"


def prepared(dataset: str = DS) -> str:
    return f"data/prepared/{dataset}/passages.jsonl"


def provenance(dataset: str = DS) -> str:
    return f"data/prepared/{dataset}/provenance.json"


def records(dataset: str = DS) -> str:
    """The records every stage after ``generate`` reads."""
    return f"data/generated/{dataset}/passages.jsonl"


def main_tokens(dataset: str = DS) -> str:
    return f"data/generated/{dataset}/main_tokens.jsonl"


def generate_report(dataset: str = DS) -> str:
    return f"data/generated/{dataset}/report.json"


def artifact(name: str, suffix: str, dataset: str = DS) -> str:
    return f"data/artifacts/{dataset}/{name}.{suffix}"


def raw_scores(method: str, dataset: str = DS) -> str:
    return f"data/scores/{dataset}/{method}.json"


def unit_scores(method: str, dataset: str = DS) -> str:
    """Unit-level scores (Parquet, :mod:`hallulab.core.units`)."""
    return f"data/aggregated/{dataset}/{method}.parquet"


def members_dir(combiner: str, dataset: str = DS) -> str:
    """The member scores a combining method reads (one Parquet file per member)."""
    return f"data/members/{dataset}/{combiner}"


def member_scores(combiner: str, method: str, variant: str, dataset: str = DS) -> str:
    """One member's unit scores: ``<method>.<variant>.parquet`` under :func:`members_dir`."""
    return f"{members_dir(combiner, dataset)}/{method}.{variant}.parquet"


def diagnostics(method: str, dataset: str = DS) -> str:
    return f"data/aggregated/{dataset}/{method}.diagnostics.json"


def unit_details(method: str, dataset: str = DS) -> str:
    """What the report shows beside each unit (:data:`hallulab.core.units.DETAIL_COLUMNS`)."""
    return f"data/aggregated/{dataset}/{method}.details.parquet"


def controls(method: str, dataset: str = DS) -> str:
    """What later stages read from the aggregate step (:class:`hallulab.pipeline.controls.AggregateControls`)."""
    return f"data/aggregated/{dataset}/{method}.controls.json"


def metrics_dir(dataset: str = DS) -> str:
    return f"metrics/{dataset}"


def metrics(method: str, kind: str = "", dataset: str = DS) -> str:
    """``metrics/<ds>/<method>.json`` (kind "") or ``.ci.json`` / ``.info.json``."""
    return f"metrics/{dataset}/{method}{'.' + kind if kind else ''}.json"


def pr_curves(method: str, dataset: str = DS) -> str:
    """PR curves of every task / level and variant of a method (one CSV, faceted by task)."""
    return f"metrics/{dataset}/pr/{method}.csv"


def n_curve(method: str, dataset: str = DS) -> str:
    return f"metrics/{dataset}/n_curve/{method}.csv"


def knob_curve(method: str, dataset: str = DS) -> str:
    return f"metrics/{dataset}/knob_curve/{method}.csv"


def corrections(dataset: str = DS) -> str:
    return f"data/corrected/{dataset}/corrections.json"


def correction_metrics(dataset: str = DS) -> str:
    return f"metrics/{dataset}/correction.json"


def summary(dataset: str = DS, suffix: str = "md") -> str:
    return f"metrics/{dataset}/summary.{suffix}"


def run_log(stage: str, dataset: str) -> str:
    """Run statistics (seconds, cache hits) of a stage: not a DVC output, never read by a stage."""
    return f"logs/{dataset}/{stage}.json"
