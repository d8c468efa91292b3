"""The offline NLI cross-encoder trains from the packaged MiniLM and saves a standard NLI model."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from hallulab.core.config import ConfigError
from hallulab.nli.pairs import LABELS, NLIPair
from hallulab.nli.train import NLITrainKnobs, accuracy, encoder_path, new_classifier, sample_pairs, train_cross_encoder
from tests.workspace import REPO, environment

pytestmark = pytest.mark.model

PAIRS = [
    NLIPair("A man is playing a guitar.", "A man plays an instrument.", "entailment", "t"),
    NLIPair("A man is playing a guitar.", "A man is sleeping.", "contradiction", "t"),
    NLIPair("A man is playing a guitar.", "The man is a famous singer.", "neutral", "t"),
    NLIPair("Two dogs run on the beach.", "Animals are outside.", "entailment", "t"),
    NLIPair("Two dogs run on the beach.", "The dogs are asleep indoors.", "contradiction", "t"),
    NLIPair("Two dogs run on the beach.", "The dogs belong to a child.", "neutral", "t"),
] * 4


def test_training_saves_a_model_whose_config_names_the_labels(tmp_path: Path) -> None:
    cfg = NLITrainKnobs(epochs=1, batch_size=8, num_threads=1, learning_rate=1e-4)
    stats = train_cross_encoder(PAIRS, cfg, tmp_path / "nli")
    assert stats["steps"] == 3 and stats["pairs"] == len(PAIRS)
    config = json.loads((tmp_path / "nli" / "config.json").read_text())
    assert [config["id2label"][str(i)] for i in range(3)] == list(LABELS)
    assert 0.0 <= accuracy(tmp_path / "nli", PAIRS) <= 1.0


def test_loading_the_encoder_with_a_new_head_prints_no_load_report(capfd: pytest.CaptureFixture[str]) -> None:
    """transformers' LOAD REPORT (classifier.weight and classifier.bias MISSING: the new head,
    always) is not printed by hallulab nli train; transformers' verbosity is set back after."""
    from transformers.utils import logging as transformers_logging

    before = transformers_logging.get_verbosity()
    model = new_classifier(encoder_path(NLITrainKnobs()))
    assert model.config.num_labels == 3 and transformers_logging.get_verbosity() == before
    err = capfd.readouterr().err
    assert "LOAD REPORT" not in err and "MISSING" not in err, err


def test_a_weight_missing_outside_the_new_head_is_still_said(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Only the expected report is silenced: a checkpoint lacking an encoder weight, or holding
    one the model does not use, is a warning naming it; the verbosity is restored on an error."""
    import transformers
    from transformers.utils import logging as transformers_logging

    before = transformers_logging.get_verbosity()
    seen: list[int] = []

    def load(path: str, **kwargs: object) -> tuple[object, dict[str, list[str]]]:
        seen.append(transformers_logging.get_verbosity())
        if path == "broken":
            raise RuntimeError("Error(s) in loading state_dict")
        info = {"missing_keys": ["classifier.bias", "bert.pooler.dense.weight"], "unexpected_keys": ["extra.w"]}
        return object(), {**info, "mismatched_keys": [], "error_msgs": []}

    monkeypatch.setattr(transformers.AutoModelForSequenceClassification, "from_pretrained", load)
    with caplog.at_level("WARNING", logger="hallulab.nli.train"):
        new_classifier("enc")
    assert seen == [transformers_logging.ERROR]
    said = caplog.text
    assert "newly initialised: bert.pooler.dense.weight" in said and "classifier.bias" not in said
    assert "does not use: extra.w" in said
    with pytest.raises(RuntimeError, match="loading state_dict"):
        new_classifier("broken")
    assert transformers_logging.get_verbosity() == before


def test_sample_pairs_is_seeded_and_limits_each_source() -> None:
    sources = {"a": lambda: iter(PAIRS[:6]), "b": lambda: iter(PAIRS[6:12])}
    first = sample_pairs(sources, {"a": 2, "b": None}, seed=3)
    assert len(first) == 8 and first == sample_pairs(sources, {"a": 2, "b": None}, seed=3)
    with pytest.raises(ConfigError, match=r"nli_train\.sources: unknown NLI source 'c'"):
        sample_pairs(sources, {"c": 1}, seed=0)


def test_frozen_word_embeddings_stay_as_pretrained_and_the_rest_trains(tmp_path: Path) -> None:
    """``freeze_word_embeddings`` (the quick recipe): the saved word-embedding matrix equals the
    packaged encoder's, while the layers above it moved."""
    from safetensors.torch import load_file

    from hallulab.nli.train import encoder_path

    cfg = NLITrainKnobs(epochs=1, batch_size=8, num_threads=1, learning_rate=1e-4, freeze_word_embeddings=True)
    train_cross_encoder(PAIRS, cfg, tmp_path / "nli")
    before = load_file(str(Path(encoder_path(cfg)) / "model.safetensors"))
    after = load_file(str(tmp_path / "nli" / "model.safetensors"))
    word = "embeddings.word_embeddings.weight"
    assert (after[f"bert.{word}"] == before[word]).all()
    layer = "encoder.layer.5.output.dense.weight"
    assert not (after[f"bert.{layer}"] == before[layer]).all()


def test_frozen_layers_stop_back_propagation_at_layer_n(tmp_path: Path) -> None:
    """``frozen_layers: 2`` (the quick recipe): the embedding block and encoder layers 0-1 are
    saved exactly as packaged, layers 2-5 and the head move; more layers than the encoder has,
    or a negative count, are refused naming the knob."""
    from safetensors.torch import load_file

    from hallulab.nli.train import encoder_path

    cfg = NLITrainKnobs(epochs=1, batch_size=8, num_threads=1, learning_rate=1e-4, frozen_layers=2)
    train_cross_encoder(PAIRS, cfg, tmp_path / "nli")
    before = load_file(str(Path(encoder_path(cfg)) / "model.safetensors"))
    after = load_file(str(tmp_path / "nli" / "model.safetensors"))
    for name in ("embeddings.position_embeddings.weight", "embeddings.LayerNorm.weight"):
        assert (after[f"bert.{name}"] == before[name]).all(), name
    for layer in range(6):
        name = f"encoder.layer.{layer}.output.dense.weight"
        unchanged = bool((after[f"bert.{name}"] == before[name]).all())
        assert unchanged == (layer < 2), name
    with pytest.raises(ConfigError, match=r"nli_train\.frozen_layers: 7 is more than the encoder's 6 layers"):
        train_cross_encoder(PAIRS, NLITrainKnobs(epochs=1, batch_size=8, frozen_layers=7), tmp_path / "too_many")
    with pytest.raises(ConfigError, match=r"nli_train\.frozen_layers: -1 is negative"):
        NLITrainKnobs(frozen_layers=-1)


def test_bfloat16_autocast_trains_float32_weights_that_differ_from_float32_training(tmp_path: Path) -> None:
    """``autocast_dtype: bfloat16`` (the swaps recipe): the forward pass runs in bfloat16, the
    saved weights stay float32, and they differ from a float32 run of the same seed (so the
    knob reaches the model); any other value is refused."""
    from safetensors.torch import load_file

    base = {"epochs": 1, "batch_size": 8, "num_threads": 1, "learning_rate": 1e-4}
    train_cross_encoder(PAIRS, NLITrainKnobs(**base), tmp_path / "fp32")
    train_cross_encoder(PAIRS, NLITrainKnobs(**base, autocast_dtype="bfloat16"), tmp_path / "bf16")
    layer = "bert.encoder.layer.5.output.dense.weight"
    fp32 = load_file(str(tmp_path / "fp32" / "model.safetensors"))[layer]
    bf16 = load_file(str(tmp_path / "bf16" / "model.safetensors"))[layer]
    assert str(bf16.dtype) == "torch.float32"
    assert not (fp32 == bf16).all()
    assert (fp32 - bf16).abs().max() < 1e-2  # three small steps apart, not another model
    with pytest.raises(ConfigError, match=r"nli_train\.autocast_dtype: 'float16'"):
        NLITrainKnobs(autocast_dtype="float16")


TRAIN_IN_A_FRESH_PROCESS = """
import hashlib, sys
from pathlib import Path
from hallulab.nli.train import NLITrainKnobs, train_cross_encoder
from tests.test_nli_train import PAIRS
cfg = NLITrainKnobs(
    epochs=1,
    batch_size=32,
    max_length=64,
    num_threads=2,
    learning_rate=2e-4,
    freeze_word_embeddings=True,
    frozen_layers=2,
)
train_cross_encoder(PAIRS * 4, cfg, Path(sys.argv[1]))
print(hashlib.sha256((Path(sys.argv[1]) / "model.safetensors").read_bytes()).hexdigest())
"""


def test_training_gives_the_same_weights_in_every_process(tmp_path: Path) -> None:
    """The committed toy outputs rest on this: training with the quick recipe's settings (batch
    32, 64 tokens, frozen word embeddings and lowest two layers, dropout on, the stages' 2 threads) comes out bit for
    bit in separate processes. perf/cpu_reproducibility.py met a thread race in torch's
    own attention layer with dropout (about 1 process in 8), so the model actually trained is
    checked here; three processes are a guard against a frequent race, not proof of none."""
    digests = {
        subprocess.run(
            [sys.executable, "-c", TRAIN_IN_A_FRESH_PROCESS, str(tmp_path / f"nli{run}")],
            cwd=REPO,
            env=environment(),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()[-1]
        for run in range(3)
    }
    assert len(digests) == 1, digests


def test_an_interrupted_training_resumes_from_its_save_to_the_same_weights(tmp_path: Path) -> None:
    """Stopped after its third of six steps (two epochs), a run that finds the save does only the
    last three and writes the weights an uninterrupted run writes, tensor for tensor; the save
    is gone once the model is written. A different recipe names another save."""
    import torch
    import transformers

    from hallulab.nli import train
    from hallulab.nli.checkpoint import training_checkpoint

    code = Path(train.__file__)
    cfg = NLITrainKnobs(epochs=2, batch_size=8, num_threads=1, learning_rate=1e-4)
    train_cross_encoder(PAIRS, cfg, tmp_path / "whole")

    settings = {"epochs": 2, "batch_size": 8, "learning_rate": 1e-4}
    checkpoint = dataclasses.replace(
        training_checkpoint(settings, PAIRS, encoder_path(cfg), code, tmp_path / "saves"), every_seconds=0.0
    )
    assert training_checkpoint({**settings, "epochs": 3}, PAIRS, encoder_path(cfg), code, tmp_path).folder.name != (
        checkpoint.folder.name
    )

    class Stop(Exception):
        pass

    def stop_after_three(done: int) -> None:
        if done == 3:
            raise Stop

    with pytest.raises(Stop):
        train_cross_encoder(PAIRS, cfg, tmp_path / "resumed", checkpoint, stop_after_three)
    saved = checkpoint.load()
    assert saved is not None and saved.steps == 3
    steps_run: list[int] = []
    stats = train_cross_encoder(PAIRS, cfg, tmp_path / "resumed", checkpoint, steps_run.append)
    assert steps_run == [4, 5, 6] and stats["steps"] == 6
    assert not checkpoint.folder.exists()

    whole = transformers.AutoModelForSequenceClassification.from_pretrained(tmp_path / "whole").state_dict()
    resumed = transformers.AutoModelForSequenceClassification.from_pretrained(tmp_path / "resumed").state_dict()
    assert whole.keys() == resumed.keys()
    assert all(torch.equal(whole[name], resumed[name]) for name in whole)
