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


def test_an_installed_package_names_the_setting_the_command_and_only_the_users_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside a checkout the message named a folder inside the environment's site-packages
    (where an installed package's checkout root would be): now it names the setting, the
    command that makes the model, and only the user's own folders (the current one, the model
    folder); make run, which needs a checkout, is not offered."""
    from hallulab.core.config import REPO_ROOT

    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path / "models-home"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserFacingError) as caught:
        model_source("models/nli_minilm", None)
    message = str(caught.value)
    assert message.startswith("NLI model folder 'models/nli_minilm' not found (setting nli.model; looked in ")
    assert "`hallulab nli train`" in message and "make run" not in message and "\n" not in message
    assert str(tmp_path / "models/nli_minilm") in message and str(tmp_path / "models-home" / "nli_minilm") in message
    assert str(REPO_ROOT) not in message and "site-packages" not in message
    with pytest.raises(UserFacingError, match=r"`hallulab nli train -o ./mine`"):
        model_source("./mine", None)
    with pytest.raises(UserFacingError, match=rf"`hallulab nli train -o {tmp_path / 'models-home' / 'other'}`"):
        model_source("models/other", None)
