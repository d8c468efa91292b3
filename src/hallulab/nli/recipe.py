"""A training recipe (``conf/nli_train/*.yaml``) run end to end: sample the pairs, fine-tune the
cross-encoder, measure its held-out accuracy.

One code path for the two ways the offline NLI model is made: the ``train_nli`` DVC stage (in
the checkout, ``make run``) and ``hallulab nli train`` (an installed package, no checkout). The
``quick`` recipe reads only the openly licensed SNLI + FEVER pairs shipped with the package
(:mod:`hallulab.data.nli_open`), so both make the same model from the same settings; the other
recipes read the NLI corpora under the data root.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hallulab.core.call_cache import model_dir
from hallulab.core.config import ConfigError, compose
from hallulab.core.errors import UserFacingError
from hallulab.core.io import file_in_the_way
from hallulab.data.loaders import DATA_ROOT_ENV
from hallulab.data.nli_open import OPEN_HELDOUT
from hallulab.nli import train
from hallulab.nli.checkpoint import training_checkpoint
from hallulab.nli.data import heldout_sources, training_sources
from hallulab.nli.train import accuracies, encoder_path, sample_pairs, train_config, train_cross_encoder

#: the folder the offline NLI config names (``nli.model: models/nli_minilm``), under
#: :func:`hallulab.core.call_cache.model_dir` when ``hallulab nli train`` made it outside a checkout
OFFLINE_MODEL = "nli_minilm"
#: the recipe that needs nothing but the package
PACKAGED_RECIPE = "quick"
#: the file ``hallulab nli train`` writes in a model folder, listing the files it wrote there: a
#: folder holding it (and nothing else) is one the command may replace
MANIFEST = "hallulab-nli-train.json"
WRITTEN_BY = "hallulab nli train"


@dataclass(frozen=True)
class TrainedNLI:
    """What one recipe run made: ``metrics`` say what the model is (profile, held-out accuracy
    per set, training statistics: the train_nli stage's metrics file); ``timing`` says how long
    this machine took (a run log's, never a metrics file's)."""

    metrics: dict[str, Any]
    timing: dict[str, Any]


def train_recipe(recipe: Mapping[str, Any], out: Path, root: Path | None, log: logging.Logger) -> TrainedNLI:
    """Train ``recipe`` (the composed ``nli_train`` section) into ``out`` and score it on the
    held-out sets it names (``heldout_sets``; null: every set under the data ``root``)."""
    raw = dict(recipe)
    profile = str(raw.pop("profile"))
    cfg = train_config(raw)
    heldout_limit = cfg.heldout_max_pairs
    # every setting is checked before the minutes of training: the held-out sets too
    heldout_sets = heldout_sources(root)
    every_root_set = [name for name in heldout_sets if name not in OPEN_HELDOUT]
    names = list(cfg.heldout_sets) if cfg.heldout_sets is not None else every_root_set
    unknown = [name for name in names if name not in heldout_sets]
    if unknown:
        raise ConfigError(f"nli_train.heldout_sets: unknown held-out set(s) {unknown}; known: {sorted(heldout_sets)}")
    pairs = sample_pairs(training_sources(root), dict(cfg.sources), cfg.seed)
    if not pairs:
        raise ConfigError(f"nli_train.sources: {dict(cfg.sources)} select no training pair; give a source a count")
    counts: dict[str, int] = {}
    for pair in pairs:
        counts[pair.source] = counts.get(pair.source, 0) + 1
    log.info("profile %s: training on %d pairs %s", profile, len(pairs), counts)
    # an interrupted run of the same recipe continues from its last save (hallulab.nli.checkpoint)
    checkpoint = training_checkpoint(raw, pairs, encoder_path(cfg), Path(train.__file__))
    stats = train_cross_encoder(pairs, cfg, out, checkpoint)
    log.info("trained: %s", stats)

    started = time.perf_counter()
    sets = {name: sample_pairs({name: heldout_sets[name]}, {name: heldout_limit}, cfg.seed) for name in names}
    scored = accuracies(out, sets, max_length=cfg.max_length)
    heldout = {name: round(100 * value, 2) for name, value in scored.items()}
    for name, value in heldout.items():
        log.info("held-out %s: %d pairs, accuracy %.2f%%", name, len(sets[name]), value)
    anli = [heldout[f"anli_r{r}_test"] for r in (1, 2, 3) if f"anli_r{r}_test" in heldout]
    summary = {"anli_mean_accuracy": round(sum(anli) / len(anli), 2)} if len(anli) == 3 else {}
    timing = {key: stats.pop(key) for key in ("seconds", "pairs_per_second")}
    metrics = {
        "profile": profile,
        "heldout_accuracy": heldout,
        **summary,
        "heldout_pairs_per_set": heldout_limit,
        "train": {**stats, "by_source": counts},
    }
    return TrainedNLI(metrics, {"train": timing, "eval_seconds": round(time.perf_counter() - started, 1)})


def offline_model_dir() -> Path:
    """Where ``hallulab nli train`` puts the offline model by default, and where the NLI scorer
    looks for ``models/nli_minilm`` outside a checkout."""
    return model_dir() / OFFLINE_MODEL


class ModelFolderError(ValueError, UserFacingError):
    """``hallulab nli train -o``: a folder the model cannot go to, or one holding files the command
    did not write (which it never deletes)."""


def _files(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if not path.is_dir())


def written_files(folder: Path) -> list[str] | None:
    """The files of ``folder`` its :data:`MANIFEST` says ``hallulab nli train`` wrote (None: it
    holds no readable manifest of the command)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("written_by") != WRITTEN_BY:
        return None
    files = manifest.get("files")
    if not isinstance(files, list):
        return None
    return [str(name) for name in files]


def check_model_folder(target: Path, flag: str = "-o") -> None:
    """Refuse, before training, a model folder ``target`` (given as ``flag``) that the model
    cannot be moved into, or that holds anything ``hallulab nli train`` did not write: a file or
    a link; a path under a file; the current folder or one holding it; a folder whose parent
    cannot be written; a non-empty folder without the command's :data:`MANIFEST`, or with files
    the manifest does not list. An empty folder, or a previous output of the command, is
    replaced once training completes."""
    given = f"{flag} {target}"
    where = Path(os.path.abspath(target))  # "a/.." as the folder it names
    if where.is_symlink():
        raise ModelFolderError(f"{given}: is a link; name a folder for the model")
    if where.exists() and not where.is_dir():
        raise ModelFolderError(f"{given}: is a file, not a folder; name a folder for the model")
    blocking = file_in_the_way(where.parents)
    if blocking is not None:
        raise ModelFolderError(f"{given}: {blocking} is a file, not a folder")
    here = Path.cwd().resolve()
    if where.resolve() == here or where.resolve() in here.parents:
        raise ModelFolderError(f"{given}: is the current folder or holds it; name a folder of its own for the model")
    parent = next(p for p in where.parents if p.exists())
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ModelFolderError(f"{given}: cannot write in {parent}")
    if not where.is_dir():
        return
    present = _files(where)
    if not present:
        return
    written = written_files(where)
    if written is None:
        raise ModelFolderError(
            f"{given}: holds files hallulab nli train did not write (no {MANIFEST} in it), e.g. {present[0]}; "
            "name a new or empty folder with -o"
        )
    foreign = [name for name in present if name != MANIFEST and name not in written]
    if foreign:
        raise ModelFolderError(
            f"{given}: holds {foreign[0]}, which hallulab nli train did not write; "
            "move it, or name another folder with -o"
        )


def train_offline_model(
    recipe: str = PACKAGED_RECIPE, settings: tuple[str, ...] = (), out: Path | None = None
) -> tuple[Path, TrainedNLI]:
    """``hallulab nli train``: compose ``recipe`` with ``settings`` (``nli_train.<key>=<value>``,
    as ``-S`` takes them), check the model folder (:func:`check_model_folder`) and every setting
    before training, train it into a folder beside ``out`` with a :data:`MANIFEST` of the files
    written, and move it into place only when it is complete (a killed run leaves the model that
    was there), and return where it is."""
    target = Path(os.path.abspath(out if out is not None else offline_model_dir()))
    foreign = [s for s in settings if not s.startswith("nli_train.")]
    if foreign:
        raise ConfigError(f"hallulab nli train: {foreign[0]!r} is not a training setting (nli_train.<key>=<value>)")
    given, flag = (out, "-o") if out is not None else (target, "model folder")
    check_model_folder(given, flag)
    composed = compose([f"nli_train={recipe}", *settings])["nli_train"]
    train_config({k: v for k, v in composed.items() if k != "profile"})
    root_env = os.environ.get(DATA_ROOT_ENV)
    log = logging.getLogger("hallulab.nli.recipe")
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        trained = train_recipe(composed, partial, Path(root_env) if root_env else None, log)
        manifest = {"written_by": WRITTEN_BY, "recipe": recipe, "settings": list(settings), "files": _files(partial)}
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    try:  # again: a file put there during training is not deleted
        check_model_folder(given, flag)
    except ModelFolderError as error:
        raise ModelFolderError(f"{error}; the trained model is in {partial}") from None
    if target.exists():
        shutil.rmtree(target)
    partial.rename(target)
    return target, trained
