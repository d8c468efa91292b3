"""DVC stage `data_files` (always runs, well under a second): fingerprint the files under the
data root that stages read besides the data set (:mod:`hallulab.data.fingerprints`)."""

from __future__ import annotations

import argparse

from hallulab.core.io import write_json
from hallulab.data.fingerprints import GROUPS, fingerprint
from hallulab.pipeline import paths
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.runner import run_stage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    args = parser.parse_args()
    word_list_file = ParamsView.load(args.params, ("concepts.word_list_file",), "data_files").get(
        "concepts.word_list_file"
    )
    for group in GROUPS:
        write_json(paths.data_files(group), fingerprint(group, str(word_list_file)))


if __name__ == "__main__":
    run_stage("data_files", main)
