"""DVC stage `train_nli`: fine-tune the offline NLI cross-encoder and measure held-out accuracy.

Reads only the `nli_train` params (recipe `full` by default, `quick` with the quick profile: the toy run and the tests).
The `quick` recipe reads only the openly licensed pairs committed in data/nli_open (no data
root needed); the others read the NLI corpora under $HALLULAB_DATA_ROOT/nli.
writes the model folder (a standard Hugging Face sequence-classification model whose
config names its labels) and metrics/nli_model/heldout.json (accuracy per held-out set).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from hallulab.core.config import ConfigError
from hallulab.core.io import write_json
from hallulab.data.loaders import DATA_ROOT_ENV
from hallulab.data.nli_open import OPEN_HELDOUT
from hallulab.nli.data import heldout_sources, training_sources
from hallulab.nli.train import TrainConfig, accuracies, sample_pairs, train_cross_encoder
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.runner import run_stage, stage_logger, write_run_log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--out", required=True, help="model folder")
    parser.add_argument("--metrics", required=True)
    args = parser.parse_args()
    log = stage_logger("train_nli")

    raw = ParamsView.load(args.params, ("nli_train",), "train_nli").get("nli_train")
    profile = str(raw.pop("profile"))
    heldout_limit = raw.get("heldout_max_pairs")
    cfg = TrainConfig(**raw)
    root_env = os.environ.get(DATA_ROOT_ENV)
    root = Path(root_env) if root_env else None

    pairs = sample_pairs(training_sources(root), dict(cfg.sources), cfg.seed)
    counts: dict[str, int] = {}
    for pair in pairs:
        counts[pair.source] = counts.get(pair.source, 0) + 1
    log.info("profile %s: training on %d pairs %s", profile, len(pairs), counts)
    stats = train_cross_encoder(pairs, cfg, Path(args.out))
    log.info("trained: %s", stats)

    started = time.perf_counter()
    heldout_sets = heldout_sources(root)
    every_root_set = [name for name in heldout_sets if name not in OPEN_HELDOUT]
    names = list(cfg.heldout_sets) if cfg.heldout_sets is not None else every_root_set
    unknown = [name for name in names if name not in heldout_sets]
    if unknown:
        raise ConfigError(f"nli_train.heldout_sets: unknown held-out set(s) {unknown}; known: {sorted(heldout_sets)}")
    sets = {name: sample_pairs({name: heldout_sets[name]}, {name: heldout_limit}, cfg.seed) for name in names}
    scored = accuracies(Path(args.out), sets, max_length=cfg.max_length)
    heldout = {name: round(100 * value, 2) for name, value in scored.items()}
    for name, value in heldout.items():
        log.info("held-out %s: %d pairs, accuracy %.2f%%", name, len(sets[name]), value)
    anli = [heldout[f"anli_r{r}_test"] for r in (1, 2, 3) if f"anli_r{r}_test" in heldout]
    summary = {"anli_mean_accuracy": round(sum(anli) / len(anli), 2)} if len(anli) == 3 else {}
    timing = {key: stats.pop(key) for key in ("seconds", "pairs_per_second")}
    # the metrics file holds what the model is, never how long this machine took (run log)
    write_json(
        args.metrics,
        {
            "profile": profile,
            "heldout_accuracy": heldout,
            **summary,
            "heldout_pairs_per_set": heldout_limit,
            "train": {**stats, "by_source": counts},
        },
    )
    write_run_log("train_nli", "nli_model", {"train": timing, "eval_seconds": round(time.perf_counter() - started, 1)})


if __name__ == "__main__":
    run_stage("train_nli", main)
