"""Readers for the NLI corpora under ``$HALLULAB_DATA_ROOT/nli`` (see that folder's README)
and for the openly licensed subset committed with the project (``data/nli_open``: its files are
named in :mod:`hallulab.data.nli_open`, written by :mod:`hallulab.nli.open_subset`).

Every reader yields :class:`NLIPair` (premise, hypothesis, label in
``entailment`` / ``neutral`` / ``contradiction``, source). Training sources (the offline
NLI model): MNLI pairs with gold labels (TaxiNLI), SNLI dev, SICK train, FEVER claims with
their gold evidence (supports -> entailment, refutes -> contradiction; FEVER has no
neutral pairs), ANLI R1-R3 dev pairs whose context no ANLI test pair shares, and FEVER
claims against passage-length premises of the three labels (:mod:`hallulab.nli.passages`).
Held-out sources: ANLI R1-R3 test, XNLI-en dev, SNLI test (e-SNLI copy).
A malformed row raises naming the file, the row and the field.
"""

from __future__ import annotations

import ast
import csv
import gzip
import json
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from pathlib import Path

from hallulab.data.loaders import DATA_ROOT_ENV
from hallulab.data.nli_open import OPEN_DIR, OPEN_FILES, OPEN_HELDOUT, OPEN_TRAINING
from hallulab.nli.pairs import EVIDENCE_LABELS, LABELS, FeverClaim, NLIPair
from hallulab.nli.passages import FeverTopics, passage_pairs
from hallulab.nli.swaps import SwapExample, swap_examples, swap_pairs

_PTB = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}", "``": '"', "''": '"'}


class NLIDataError(ValueError):
    """A row of an NLI file could not be read; names the file, row and field."""


def _pair(premise: str, hypothesis: str, label: str, source: str, where: str) -> NLIPair:
    label = label.strip().lower()
    if label not in LABELS:
        raise NLIDataError(f"{where}, field 'label': {label!r} is not one of {LABELS}")
    if not premise.strip() or not hypothesis.strip():
        raise NLIDataError(f"{where}: empty premise or hypothesis")
    return NLIPair(premise.strip(), hypothesis.strip(), label, source)


def detokenize_ptb(text: str) -> str:
    """Undo FEVER's PTB escapes and spacing around punctuation (``-LRB- 2008 -RRB-`` -> ``(2008)``)."""
    words = [_PTB.get(w, w) for w in text.split()]
    out = " ".join(words)
    for before, after in ((" ,", ","), (" .", "."), (" ;", ";"), (" :", ":"), ("( ", "("), (" )", ")"), (" 's", "'s")):
        out = out.replace(before, after)
    return out


def read_mnli_taxinli(path: Path) -> Iterator[NLIPair]:
    with open(path, encoding="utf-8", newline="") as handle:
        for row_number, row in enumerate(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE), start=2):
            yield _pair(row["prem"], row["hyp"], row["label"], "mnli", f"{path}:{row_number}")


def read_snli_csv(path: Path) -> Iterator[NLIPair]:
    with open(path, encoding="utf-8", newline="") as handle:
        for row_number, row in enumerate(csv.DictReader(handle), start=2):
            yield _pair(row["premise"], row["hypothesis"], row["label"], "snli_dev", f"{path}:{row_number}")


def read_sick(path: Path, split: str) -> Iterator[NLIPair]:
    """SICK rows whose ``SemEval_set`` is ``split`` (TRAIN / TRIAL / TEST)."""
    with open(path, encoding="utf-8", newline="") as handle:
        for row_number, row in enumerate(csv.DictReader(handle, delimiter="\t"), start=2):
            if row["SemEval_set"].strip() == split:
                yield _pair(
                    row["sentence_A"],
                    row["sentence_B"],
                    row["entailment_label"],
                    f"sick_{split.lower()}",
                    f"{path}:{row_number}",
                )


def read_fever_claims(folder: Path) -> Iterator[FeverClaim]:
    """FEVER train claims with a verdict (SUPPORTS / REFUTES) and at least one gold evidence
    sentence, detokenised; NOT ENOUGH INFO rows carry no evidence and are skipped."""
    chunks = sorted(folder.glob("split_wiki_data_*.csv.gz"), key=lambda p: int(p.name.split("_")[-1].split(".")[0]))
    for chunk in chunks:
        with gzip.open(chunk, "rt", encoding="utf-8", newline="") as handle:
            for row_number, row in enumerate(csv.DictReader(handle), start=2):
                if row["label"] not in EVIDENCE_LABELS:
                    continue
                try:
                    evidence = ast.literal_eval(row["evidence"])
                except (ValueError, SyntaxError) as error:
                    raise NLIDataError(f"{chunk}:{row_number}, field 'evidence': not a Python list literal") from error
                if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
                    raise NLIDataError(f"{chunk}:{row_number}, field 'evidence': not a list of strings")
                sentences = tuple(detokenize_ptb(e) for e in evidence if e.strip())
                if sentences and row["claim"].strip():
                    yield FeverClaim(row["claim"].strip(), row["label"], sentences)


def read_fever(folder: Path) -> Iterator[NLIPair]:
    """FEVER train claims against their gold evidence joined (SUPPORTS -> entailment,
    REFUTES -> contradiction)."""
    for claim in read_fever_claims(folder):
        yield NLIPair(" ".join(claim.evidence), claim.claim, EVIDENCE_LABELS[claim.verdict], "fever")


def read_anli(path: Path, source: str) -> Iterator[NLIPair]:
    short = {"e": "entailment", "n": "neutral", "c": "contradiction"}
    with open(path, encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            row = json.loads(line)
            label = short.get(row["label"], row["label"])
            yield _pair(row["context"], row["hypothesis"], label, source, f"{path}:{line_number}")


ANLI_ROUNDS = (1, 2, 3)


def read_anli_split(folder: Path, round_number: int, split: str) -> Iterator[NLIPair]:
    """One ANLI round's ``dev`` or ``test`` file, its pairs' source ``anli_r<round>_<split>``."""
    return read_anli(folder / f"R{round_number}" / f"{split}.jsonl", f"anli_r{round_number}_{split}")


def read_anli_dev_disjoint(folder: Path) -> Iterator[NLIPair]:
    """ANLI R1-R3 dev pairs whose context is the context of no ANLI test pair (any round).

    ANLI reuses a context across its dev and test splits (274 of R1 dev's 845 contexts are
    also R1 test contexts), so training on dev as it is would let the held-out ANLI test
    accuracy read premises the model was trained on. R1/R2 contexts are Wikipedia leads,
    many of them biographies: the domain SelfCheckGPT-NLI reads on WikiBio.
    """
    test_contexts = {pair.premise for r in ANLI_ROUNDS for pair in read_anli_split(folder, r, "test")}
    for r in ANLI_ROUNDS:
        for pair in read_anli_split(folder, r, "dev"):
            if pair.premise not in test_contexts:
                yield pair


def read_xnli_tsv(path: Path) -> Iterator[NLIPair]:
    with open(path, encoding="utf-8", newline="") as handle:
        for row_number, row in enumerate(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE), start=1):
            if len(row) != 3:
                raise NLIDataError(f"{path}:{row_number}: expected 3 columns, got {len(row)}")
            yield _pair(row[0], row[1], row[2], "xnli_en_dev", f"{path}:{row_number}")


def read_esnli_test(folder: Path) -> Iterator[NLIPair]:
    premises = (folder / "s1.test").read_text(encoding="utf-8").splitlines()
    hypotheses = (folder / "s2.test").read_text(encoding="utf-8").splitlines()
    labels = (folder / "labels.test").read_text(encoding="utf-8").splitlines()
    if not len(premises) == len(hypotheses) == len(labels):
        raise NLIDataError(f"{folder}: s1/s2/labels have {len(premises)}/{len(hypotheses)}/{len(labels)} lines")
    for i, (premise, hypothesis, label) in enumerate(zip(premises, hypotheses, labels, strict=True), start=1):
        yield _pair(premise, hypothesis, label, "snli_test", f"{folder}/labels.test:{i}")


class OpenSubsetError(ValueError):
    """A line of a committed open-subset file could not be read; names the file, line and field."""


def read_open_pairs(path: Path, source: str) -> Iterator[NLIPair]:
    """The pairs of one open-subset file, labelled ``source``."""
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: the openly licensed NLI subset is missing; it is committed with the project "
            "(`git checkout -- data/nli_open`) or rebuilt by `python -m hallulab.nli.open_subset --root DATA_ROOT`"
        )
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            row = json.loads(line)
            for field in ("premise", "hypothesis", "label"):
                if not isinstance(row.get(field), str) or not row[field].strip():
                    raise OpenSubsetError(f"{path}:{line_number}, field {field!r}: missing or empty")
            if row["label"] not in LABELS:
                raise OpenSubsetError(f"{path}:{line_number}, field 'label': {row['label']!r} is not one of {LABELS}")
            yield NLIPair(row["premise"], row["hypothesis"], row["label"], source)


def open_sources(folder: Path = OPEN_DIR) -> dict[str, Callable[[], Iterator[NLIPair]]]:
    """Every open-subset source by name (training and held-out)."""

    def reader(name: str) -> Callable[[], Iterator[NLIPair]]:
        return lambda: read_open_pairs(folder / OPEN_FILES[name], name)

    return {name: reader(name) for name in OPEN_FILES}


def _needs_root(name: str) -> Callable[[], Iterator[NLIPair]]:
    def missing() -> Iterator[NLIPair]:
        raise FileNotFoundError(
            f"NLI source {name!r} is read from the NLI corpora under ${DATA_ROOT_ENV}/nli, and {DATA_ROOT_ENV} "
            "is not set: `hallulab data fetch nli --root DIR` downloads them (the `quick` recipe needs "
            "none: it reads the open subset committed in data/nli_open)"
        )

    return missing


def _root_training(nli: Path) -> dict[str, Callable[[], Iterator[NLIPair]]]:
    """The training sources under ``nli`` (``root/nli``), each read only when called."""

    @cache  # read and indexed once, on first use, for all three labels
    def fever_topics() -> FeverTopics:
        return FeverTopics.of(list(read_fever_claims(nli / "fever_vanilla")))

    def fever_passages(label: str) -> Callable[[], Iterator[NLIPair]]:
        return lambda: passage_pairs(fever_topics(), label)

    @cache  # tagged once for both labels: the twins share their draws
    def fever_swaps() -> list[SwapExample]:
        return swap_examples(fever_topics())

    def fever_swapped(label: str) -> Callable[[], Iterator[NLIPair]]:
        return lambda: swap_pairs(fever_swaps(), label)

    return {
        "mnli": lambda: read_mnli_taxinli(nli / "mnli_taxinli" / "taxinli10k.tsv"),
        "snli_dev": lambda: read_snli_csv(nli / "snli" / "dev.csv"),
        "sick_train": lambda: read_sick(nli / "sick" / "SICK.txt", "TRAIN"),
        "sick_trial": lambda: read_sick(nli / "sick" / "SICK.txt", "TRIAL"),
        "fever": lambda: read_fever(nli / "fever_vanilla"),
        "anli_dev": lambda: read_anli_dev_disjoint(nli / "anli_v1.0"),
        **{f"fever_passages_{label}": fever_passages(label) for label in LABELS},
        **{f"fever_swaps_{label}": fever_swapped(label) for label in ("entailment", "contradiction")},
    }


def _root_heldout(nli: Path) -> dict[str, Callable[[], Iterator[NLIPair]]]:
    """The held-out sets under ``nli`` (``root/nli``), each read only when called."""

    def anli_test(round_number: int) -> Callable[[], Iterator[NLIPair]]:
        return lambda: read_anli_split(nli / "anli_v1.0", round_number, "test")

    sources = {f"anli_r{r}_test": anli_test(r) for r in ANLI_ROUNDS}
    sources["xnli_en_dev"] = lambda: read_xnli_tsv(nli / "xnli_en" / "dev-en.tsv")
    sources["snli_test"] = lambda: read_esnli_test(nli / "snli" / "esnli_test")
    return sources


def _with_open(
    opened: Sequence[str], root_readers: Callable[[Path], dict[str, Callable[[], Iterator[NLIPair]]]], root: Path | None
) -> dict[str, Callable[[], Iterator[NLIPair]]]:
    """The open subset's ``opened`` sources, then the data root's (with no data root, each of
    those raises naming the fetch command when read)."""
    readers = root_readers((root or Path()) / "nli")
    if root is None:
        readers = {name: _needs_root(name) for name in readers}
    available = open_sources()
    return {**{name: available[name] for name in opened}, **readers}


def training_sources(root: Path | None) -> dict[str, Callable[[], Iterator[NLIPair]]]:
    """Every training source by name. ``open_*`` are the openly licensed pairs committed with
    the project (:mod:`hallulab.nli.open_subset`); every other source reads ``root/nli`` (with
    no data root, reading one raises naming the fetch command). ``fever_passages_<label>`` are
    FEVER claims against a passage-length premise (:mod:`hallulab.nli.passages`), one source per
    label so that a recipe sets each class's count. ``fever_swaps_<label>`` are FEVER evidence
    sentences with one entity's value swapped (contradiction) or unchanged (entailment) against
    a passage that states the original (:mod:`hallulab.nli.swaps`)."""
    return _with_open(OPEN_TRAINING, _root_training, root)


def heldout_sources(root: Path | None) -> dict[str, Callable[[], Iterator[NLIPair]]]:
    """Every held-out set by name: the open subset's SNLI test sample (``open_snli_test``) and,
    under ``root/nli``, ANLI R1-R3 test, XNLI-en dev and SNLI test."""
    return _with_open(OPEN_HELDOUT, _root_heldout, root)
