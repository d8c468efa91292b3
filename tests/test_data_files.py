"""Files under the data root that stages read besides the data set are DVC dependencies,
through the fingerprints the always-run ``data_files`` stage writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from hallulab.data.fingerprints import DataFileInputs, fingerprint
from hallulab.data.nli_open import OPEN_DIR
from hallulab.pipeline import paths

REPO = Path(__file__).resolve().parents[1]

#: the `full` recipe's inputs (every NLI corpus under the data root) and the file word list
FULL = DataFileInputs(("mnli", "fever"), None, "auto", "lists/words.txt")
#: the `quick` recipe's (the open subset only) and the packaged word list
QUICK = DataFileInputs(("open_snli_dev", "open_fever"), ("open_snli_test",), "wordfreq", "lists/words.txt")


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
    nli_before = fingerprint("nli_corpora", FULL)
    words_before = fingerprint("word_list", FULL)
    assert list(nli_before["files"]) == ["sick/SICK.txt"] and list(words_before["files"]) == ["lists/words.txt"]
    corpus.write_text("pair_ID\tsentence_A\n1\tA dog.\n")
    assert fingerprint("nli_corpora", FULL) != nli_before
    assert fingerprint("word_list", FULL) == words_before  # the other group's readers stay
    words.write_text("the\nand\n")
    assert fingerprint("word_list", FULL) != words_before


def test_without_a_data_root_the_fingerprint_is_empty_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HALLULAB_DATA_ROOT", raising=False)
    assert fingerprint("word_list", FULL) == {"group": "word_list", "data_root": None, "files": {}}


@pytest.mark.parametrize("root", [None, "set"])
def test_the_quick_recipe_reads_the_same_files_with_or_without_a_data_root(
    root: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The toy run's inputs are the open subset committed in the repository and the packaged
    word list, so what `make run` depends on is the same in a bare clone and beside the data."""
    if root is None:
        monkeypatch.delenv("HALLULAB_DATA_ROOT", raising=False)
    else:
        (tmp_path / "nli" / "sick").mkdir(parents=True)
        (tmp_path / "nli" / "sick" / "SICK.txt").write_text("x\n")
        (tmp_path / "lists").mkdir()
        (tmp_path / "lists" / "words.txt").write_text("the\n")
        monkeypatch.setenv("HALLULAB_DATA_ROOT", str(tmp_path))
    nli = fingerprint("nli_corpora", QUICK)
    assert sorted(nli["files"]) == [f"data/nli_open/{p.name}" for p in sorted(OPEN_DIR.glob("*.jsonl.gz"))]
    assert nli == json.loads((REPO / paths.data_files("nli_corpora")).read_text())
    assert fingerprint("word_list", QUICK) == {
        "group": "word_list",
        "data_root": None,
        "files": {},
        "source": "wordfreq",
    }


def test_the_readers_depend_on_their_groups_fingerprint() -> None:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    assert stages["data_files"]["always_changed"] is True
    assert paths.data_files("nli_corpora") in stages["train_nli"]["deps"]
    assert paths.data_files("word_list") in stages["extract_concepts"]["deps"]
    assert paths.data_files("word_list") not in stages["train_nli"]["deps"]
