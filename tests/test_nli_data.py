"""The NLI corpora readers reproduce the counts documented in the data README."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest

from hallulab.data.loaders import data_root
from hallulab.data.nli_open import OPEN_DIR, OPEN_FILES
from hallulab.nli.data import (
    NLIDataError,
    OpenSubsetError,
    detokenize_ptb,
    heldout_sources,
    read_open_pairs,
    read_xnli_tsv,
    training_sources,
)
from hallulab.nli.open_subset import FEVER_PAIRS, SNLI_TEST_PAIRS, build
from tests.conftest import requires_wikibio

EXPECTED = {
    "mnli": {"entailment": 3495, "contradiction": 3375, "neutral": 3201},
    "snli_dev": {"entailment": 3325, "contradiction": 3275, "neutral": 3231},
    "sick_train": {"neutral": 2524, "entailment": 1274, "contradiction": 641},
    # FEVER train minus NEI and minus the 484 / 191 rows without evidence
    "fever": {"entailment": 80035 - 484, "contradiction": 29775 - 191},
    # R1-R3 dev (3,200) minus the 710 pairs whose context an ANLI test pair shares
    "anli_dev": {"entailment": 841, "neutral": 844, "contradiction": 805},
    "anli_r1_test": {"entailment": 334, "neutral": 333, "contradiction": 333},
    "anli_r3_test": {"entailment": 402, "neutral": 402, "contradiction": 396},
    "xnli_en_dev": {"entailment": 830, "neutral": 830, "contradiction": 830},
    "snli_test": {"entailment": 3368, "contradiction": 3237, "neutral": 3219},
}


@requires_wikibio  # same data root
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_reader_counts_match_the_data_readme(name: str) -> None:
    root = data_root()
    assert root is not None
    sources = {**training_sources(root), **heldout_sources(root)}
    assert Counter(p.label for p in sources[name]()) == EXPECTED[name]


def test_ptb_escapes_are_undone() -> None:
    assert detokenize_ptb("Fox -LRB- 2008 -RRB- , a series .") == "Fox (2008), a series."


def test_bad_label_names_file_row_and_field(tmp_path: Path) -> None:
    path = tmp_path / "x.tsv"
    path.write_text("a premise\ta hypothesis\tmaybe\n")
    with pytest.raises(NLIDataError, match=r"x.tsv:1, field 'label'"):
        list(read_xnli_tsv(path))


@requires_wikibio  # same data root
def test_anli_dev_shares_no_context_with_the_heldout_anli_tests() -> None:
    root = data_root()
    assert root is not None
    held_out = heldout_sources(root)
    test_contexts = {p.premise for name in ("anli_r1_test", "anli_r2_test", "anli_r3_test") for p in held_out[name]()}
    dev = list(training_sources(root)["anli_dev"]())
    assert {p.source for p in dev} == {"anli_r1_dev", "anli_r2_dev", "anli_r3_dev"}
    assert not {p.premise for p in dev} & test_contexts
    # every dev round keeps most of its pairs: the filter drops shared contexts, not rounds
    assert all(sum(p.source == f"anli_r{r}_dev" for p in dev) > 600 for r in (1, 2, 3))


@requires_wikibio  # same data root
def test_the_committed_open_subset_is_what_its_command_writes(tmp_path: Path) -> None:
    """data/nli_open is re-derivable: `python -m hallulab.nli.open_subset --root DATA_ROOT`
    writes the committed bytes again."""
    root = data_root()
    assert root is not None
    counts = build(root, tmp_path)
    assert counts == {"open_snli_dev": 9831, "open_snli_test": SNLI_TEST_PAIRS, "open_fever": FEVER_PAIRS}
    for name in OPEN_FILES.values():
        assert (tmp_path / name).read_bytes() == (OPEN_DIR / name).read_bytes(), name


def test_the_open_subset_reads_without_a_data_root() -> None:
    """The quick recipe's sources need no data root; every other source says how to get it."""
    training, heldout = training_sources(None), heldout_sources(None)
    labels = Counter(p.label for p in training["open_snli_dev"]())
    assert sum(labels.values()) == 9831 and set(labels) == {"entailment", "neutral", "contradiction"}
    assert Counter(p.label for p in training["open_fever"]()).keys() == {"entailment", "contradiction"}
    assert sum(1 for _ in heldout["open_snli_test"]()) == SNLI_TEST_PAIRS
    for source in (training["mnli"], heldout["anli_r1_test"]):
        with pytest.raises(FileNotFoundError, match="hallulab data fetch nli --root DIR"):
            list(source())


def test_a_bad_open_subset_line_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"premise": "p", "hypothesis": "h", "label": "entailment"}\n{"premise": "p"}\n'))
    with pytest.raises(OpenSubsetError, match=r"x.jsonl.gz:2, field 'hypothesis'"):
        list(read_open_pairs(path, "open_x"))
