"""Where a local NLI model folder is found: the current folder (a stage's workspace), else the
checkout the package runs from (the API or CLI called from another folder), else the model
folder ``hallulab nli train`` writes (an installed package), else a one-line error naming the
commands that make the offline model."""

from __future__ import annotations

from pathlib import Path

import pytest

from hallulab.core.call_cache import MODEL_DIR_ENV
from hallulab.core.errors import UserFacingError
from hallulab.nli.scorer import model_source


def test_a_hub_id_is_passed_as_it_is(tmp_path: Path) -> None:
    assert model_source("potsawee/deberta-v3-large-mnli", tmp_path) == "potsawee/deberta-v3-large-mnli"


def test_the_current_folder_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checkout, workspace = tmp_path / "checkout", tmp_path / "workspace"
    for root in (checkout, workspace):
        (root / "models/nli_minilm").mkdir(parents=True)
    monkeypatch.chdir(workspace)
    assert model_source("models/nli_minilm", checkout) == "models/nli_minilm"  # as the stages always named it


def test_from_another_folder_the_checkouts_model_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checkout, elsewhere = tmp_path / "checkout", tmp_path / "elsewhere"
    (checkout / "models/nli_minilm").mkdir(parents=True)
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert model_source("models/nli_minilm", checkout) == str(checkout / "models/nli_minilm")


def test_outside_a_checkout_the_trained_model_folder_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models = tmp_path / "models-home"
    monkeypatch.setenv(MODEL_DIR_ENV, str(models))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserFacingError):
        model_source("models/nli_minilm", tmp_path / "no-checkout")
    (models / "nli_minilm").mkdir(parents=True)
    assert model_source("models/nli_minilm", tmp_path / "no-checkout") == str(models / "nli_minilm")
    with pytest.raises(UserFacingError):  # only the models/ names are looked up there
        model_source("./nli_minilm", tmp_path / "no-checkout")


def test_a_missing_model_names_every_place_and_the_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path / "models-home"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserFacingError) as caught:
        model_source("models/nli_minilm", tmp_path / "checkout")
    message = str(caught.value)
    assert "\n" not in message and "hallulab nli train" in message and "make run" in message
    assert str(tmp_path / "checkout" / "models/nli_minilm") in message
    assert str(tmp_path / "models-home" / "nli_minilm") in message
