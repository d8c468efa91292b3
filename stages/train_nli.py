"""DVC stage `train_nli`: fine-tune the offline NLI cross-encoder and measure held-out accuracy.

Reads only the `nli_train` params (recipe `full` by default, `quick` with the quick profile: the toy run and the tests).
The `quick` recipe reads only the openly licensed pairs committed in data/nli_open (no data
root needed); the others read the NLI corpora under $HALLULAB_DATA_ROOT/nli.
writes the model folder (a standard Hugging Face sequence-classification model whose
config names its labels) and metrics/nli_model/heldout.json (accuracy per held-out set), by
the recipe runner ``hallulab nli train`` also calls (hallulab.nli.recipe).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from hallulab.core.io import write_json
from hallulab.data.loaders import DATA_ROOT_ENV
from hallulab.nli.recipe import train_recipe
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.runner import run_stage, stage_logger, write_run_log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--out", required=True, help="model folder")
    parser.add_argument("--metrics", required=True)
    args = parser.parse_args()
    log = stage_logger("train_nli")

    recipe = ParamsView.load(args.params, ("nli_train",), "train_nli").get("nli_train")
    root_env = os.environ.get(DATA_ROOT_ENV)
    trained = train_recipe(recipe, Path(args.out), Path(root_env) if root_env else None, log)
    # the metrics file holds what the model is, never how long this machine took (run log)
    write_json(args.metrics, trained.metrics)
    write_run_log("train_nli", "nli_model", trained.timing)


if __name__ == "__main__":
    run_stage("train_nli", main)
