"""DVC stage `data_files` (always runs; it only hashes files): fingerprint the files under the
data root that stages read besides the data set (:mod:`hallulab.data.fingerprints`)."""

from __future__ import annotations

import argparse

from hallulab.core.io import write_json
from hallulab.data.fingerprints import GROUPS, DataFileInputs, fingerprint
from hallulab.pipeline import paths
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.runner import run_stage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    args = parser.parse_args()
    keys = ("nli_train.sources", "nli_train.heldout_sets", "concepts.word_list", "concepts.word_list_file")
    view = ParamsView.load(args.params, keys, "data_files")
    heldout = view.get("nli_train.heldout_sets")
    inputs = DataFileInputs(
        nli_sources=tuple(view.get("nli_train.sources")),
        nli_heldout_sets=tuple(heldout) if heldout is not None else None,
        word_list=str(view.get("concepts.word_list")),
        word_list_file=str(view.get("concepts.word_list_file")),
    )
    for group in GROUPS:
        write_json(paths.data_files(group), fingerprint(group, inputs))


if __name__ == "__main__":
    run_stage("data_files", main)
