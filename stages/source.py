"""DVC stage `source` (always runs, in about a second): fingerprint the data set's source.

Writes data/prepared/<dataset>/source.json: the sha256 of every local file the data set
config reads (a JSONL file anywhere, the local copies under $HALLULAB_DATA_ROOT), or the hub
id, split and revision. ``prepare`` depends on this file, so it re-runs exactly when the
data changes, whichever data set is chosen, and not otherwise (DVC compares the file's hash).
"""

from __future__ import annotations

import argparse

from hallulab.core.io import write_json
from hallulab.data.loaders import source_fingerprint
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.runner import run_stage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--params", default="params.yaml")
    args = parser.parse_args()
    dataset = ParamsView.load(args.params, ("dataset",), "source").get("dataset")
    write_json(args.out, source_fingerprint(dataset))


if __name__ == "__main__":
    run_stage("source", main)
