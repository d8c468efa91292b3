"""Files under the data root that stages read besides the data set are DVC dependencies,
through the fingerprints the always-run ``data_files`` stage writes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hallulab.data.fingerprints import fingerprint
from hallulab.pipeline import paths

REPO = Path(__file__).resolve().parents[1]


def test_editing_a_data_root_file_changes_its_groups_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HALLULAB_DATA_ROOT", str(tmp_path))
    (tmp_path / "nli" / "sick").mkdir(parents=True)
    corpus = tmp_path / "nli" / "sick" / "SICK.txt"
    corpus.write_text("pair_ID\tsentence_A\n1\tA cat.\n")
    words = tmp_path / "lists" / "words.txt"
    words.parent.mkdir()
    words.write_text("the\nof\n")
    nli_before = fingerprint("nli_corpora", "lists/words.txt")
    words_before = fingerprint("word_list", "lists/words.txt")
    assert list(nli_before["files"]) == ["sick/SICK.txt"] and list(words_before["files"]) == ["lists/words.txt"]
    corpus.write_text("pair_ID\tsentence_A\n1\tA dog.\n")
    assert fingerprint("nli_corpora", "lists/words.txt") != nli_before
    assert fingerprint("word_list", "lists/words.txt") == words_before  # the other group's readers stay
    words.write_text("the\nand\n")
    assert fingerprint("word_list", "lists/words.txt") != words_before


def test_without_a_data_root_the_fingerprint_is_empty_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HALLULAB_DATA_ROOT", raising=False)
    assert fingerprint("word_list", "x.txt") == {"group": "word_list", "data_root": None, "files": {}}


def test_the_readers_depend_on_their_groups_fingerprint() -> None:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    assert stages["data_files"]["always_changed"] is True
    assert paths.data_files("nli_corpora") in stages["train_nli"]["deps"]
    assert paths.data_files("word_list") in stages["extract_concepts"]["deps"]
    assert paths.data_files("word_list") not in stages["train_nli"]["deps"]
