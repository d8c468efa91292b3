"""Fetch the real data sets from their public sources into the data root (``$HALLULAB_DATA_ROOT``).

The manifest (:data:`DATA_SOURCES`) pins every file the project reads under the data root:
its path there, the GitHub repository, commit and path it comes from, its size and sha256.
Pinning a commit and checking the sha256 makes a fetched data root byte-identical to the one
the committed results were computed on, so the ``source`` and ``data_files`` fingerprints (and
with them DVC's record of what was run) agree on every machine.

A file is fetched one of two ways (:attr:`SourceFile.derive`):

* ``as fetched``: the bytes of the repository file at that commit;
* ``gzip``: the repository file compressed with GNU gzip (``gzip -9 -n``). The FEVER chunks of
  GGKorn/fever-nli are kept compressed under ``nli/fever_vanilla``; the raw file's sha256 is
  checked first, then the compressed one's. GNU gzip, not Python's :mod:`gzip`, because zlib
  writes another (equally valid) deflate stream, and ``data_files`` fingerprints the
  compressed bytes.

A file with no public source (WikiBio's and FactualBio's JSON, Concept-7's label files: each
built from public files, see :attr:`SourceFile.missing_hint`) cannot be fetched: :func:`fetch`
fetches the rest, then stops with one line saying which file to put where and its sha256.

Downloads use :mod:`urllib` with a per-request timeout and never read more than the pinned size,
go to a temporary file beside the target, and are renamed over it only once size and sha256
match; a file already there with the pinned sha256 is left alone. A fetch holds a lock on the
data root while it runs (a second fetch into the same root waits for it), so a temporary file
it finds beside a target was left by a fetch that was killed, and is removed before the file is
fetched again (the ``data_files`` fingerprints read every file of a folder, hidden ones too).
"""

from __future__ import annotations

import fcntl
import hashlib
import http.client
import os
import secrets
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal, Protocol

from hallulab.core.errors import UserFacingError
from hallulab.core.io import file_sha256
from hallulab.data.loaders import DATA_ROOT_ENV

#: Where GitHub serves a file at a commit: ``<base>/<repository>/<commit>/<path>``.
GITHUB_RAW = "https://raw.githubusercontent.com"

#: Hang guard: the longest one connect or one read may wait, in seconds. A stalled server thus
#: fails with an error naming the URL instead of hanging; since no download reads past the
#: pinned size, the whole download is bounded too.
REQUEST_TIMEOUT_S = 60.0

#: Hang guard for the ``gzip`` process that derives a compressed file, in seconds.
GZIP_TIMEOUT_S = 300.0

#: Bytes read from the network per call.
CHUNK_BYTES = 1 << 20

BASE_URL_SCHEMES = ("http", "https", "file")

Derive = Literal["as fetched", "gzip"]
Outcome = Literal["fetched", "replaced", "present"]


class FetchError(UserFacingError):
    """A data set could not be fetched; the message is one line naming the URL or file."""


class UnknownDataSourceError(FetchError):
    """A name that is not in the manifest."""


class DownloadError(FetchError):
    """An HTTP error, a refused or broken connection, or a timeout; names the URL."""


class ChecksumError(FetchError):
    """What was received (or derived) is not the pinned size or sha256; nothing was written."""


class NoPublicSourceError(FetchError):
    """A file of the data set has no public source: says what to put where."""


@dataclass(frozen=True)
class GitHubFile:
    """A file of a public GitHub repository at a commit."""

    repository: str  # owner/name
    commit: str  # 40 hex digits
    path: str  # inside the repository

    def __post_init__(self) -> None:
        if len(self.commit) != 40 or any(c not in "0123456789abcdef" for c in self.commit):
            raise ValueError(f"{self.repository}: commit must be 40 lowercase hex digits, got {self.commit!r}")

    def url(self, base_url: str | None = None) -> str:
        """``<base>/<repository>/<commit>/<path>``; ``base_url`` replaces :data:`GITHUB_RAW`."""
        base = (base_url or GITHUB_RAW).rstrip("/")
        return f"{base}/{self.repository}/{self.commit}/{urllib.parse.quote(self.path)}"


@dataclass(frozen=True)
class SourceFile:
    """One file under the data root: where it comes from and what its bytes must be.

    ``sha256`` and ``size`` are those of the file written under the data root. For a
    ``gzip`` file, ``source_sha256`` and ``source_size`` are those of the repository file it
    is compressed from (checked before compressing). A file with no public source has
    ``source=None`` and a ``missing_hint`` (what it was built from, how to get it).
    """

    target: str  # relative to the data root, with "/" separators
    sha256: str
    size: int
    source: GitHubFile | None = None
    derive: Derive = "as fetched"
    source_sha256: str | None = None
    source_size: int | None = None
    missing_hint: str | None = None

    def __post_init__(self) -> None:
        target = PurePosixPath(self.target)
        if target.is_absolute() or ".." in target.parts or not target.parts:
            raise ValueError(f"target must be a relative path under the data root, got {self.target!r}")
        if (self.source is None) == (self.missing_hint is None):
            raise ValueError(f"{self.target}: give either a source or a missing_hint")
        if (self.derive == "gzip") != (self.source_sha256 is not None and self.source_size is not None):
            raise ValueError(f"{self.target}: a gzip file, and only one, has source_sha256 and source_size")

    @property
    def fetched_sha256(self) -> str:
        """The sha256 of the bytes downloaded from the source."""
        return self.source_sha256 or self.sha256

    @property
    def fetched_size(self) -> int:
        """The size of the bytes downloaded from the source."""
        return self.source_size if self.source_size is not None else self.size


@dataclass(frozen=True)
class DataSource:
    """A data set: its name (``hallulab data fetch NAME``), licence and files."""

    name: str
    title: str
    licence: str
    files: tuple[SourceFile, ...]


@dataclass(frozen=True)
class FileResult:
    """What :func:`fetch` did with one file."""

    target: Path
    outcome: Outcome  # fetched (was absent), replaced (had another sha256), present (left alone)
    url: str | None


@dataclass(frozen=True)
class FetchReport:
    """The files of one data set, fetched or already present under ``root``."""

    name: str
    root: Path
    files: tuple[FileResult, ...]

    @property
    def fetched(self) -> tuple[FileResult, ...]:
        return tuple(f for f in self.files if f.outcome != "present")

    @property
    def present(self) -> tuple[FileResult, ...]:
        return tuple(f for f in self.files if f.outcome == "present")


class Response(Protocol):
    """The part of an HTTP response :func:`fetch` reads."""

    def read(self, amt: int, /) -> bytes: ...


class Opener(Protocol):
    """What :func:`urllib.request.urlopen` is to :func:`fetch`."""

    def __call__(self, url: str, *, timeout: float) -> AbstractContextManager[Response]: ...


# --- the manifest --------------------------------------------------------------------------


def _github(repository: str, commit: str, path: str, target: str, sha256: str, size: int) -> SourceFile:
    return SourceFile(target, sha256, size, GitHubFile(repository, commit, path))


def _derived(target: str, sha256: str, size: int, hint: str) -> SourceFile:
    return SourceFile(target, sha256, size, missing_hint=hint)


#: WikiBio GPT-3 (Manakul et al., 2023). No public copy holds the joined file: the text,
#: sentences and labels are in zthang/Focus@8c260bf1 (data/wikibio_gpt3_v3.pkl), the samples
#: and row order in two files of KAIST-CS584-HCI/selfcheckgpt-replication; the JSON joins
#: them on wiki_bio_test_idx. The loader (hallulab.data.loaders.load_wikibio, source auto)
#: reads the hub copy only when the data root is unset.
WIKIBIO = DataSource(
    name="wikibio",
    title="WikiBio GPT-3 hallucination set (SelfCheckGPT): 238 passages, 20 samples each",
    licence="CC-BY-SA-3.0 (dataset card of potsawee/wiki_bio_gpt3_hallucination)",
    files=(
        _derived(
            "wikibio_gpt3_hallucination/wiki_bio_gpt3_hallucination.evaluation.json",
            "71e36ce3640a1f0c066bd8bb9a6333b7e25e9a2ca39f8e998d01dc13b7228138",
            5_167_640,
            'the evaluation split of potsawee/wiki_bio_gpt3_hallucination as {"evaluation": [rows]}, which no '
            "public file holds whole (it was joined from zthang/Focus data/wikibio_gpt3_v3.pkl and the samples in "
            "KAIST-CS584-HCI/selfcheckgpt-replication); without it the wikibio loader reads that set from the "
            f"Hugging Face hub (the hub extra) only when {DATA_ROOT_ENV} is unset, or with -S dataset.source=hub",
        ),
    ),
)

#: FactualBio (Farquhar et al., 2024): the records are a Python literal in data.py of
#: jlko/long_hallucinations@957b8060, taken out with ast (nothing executed) into JSON.
FACTUALBIO = DataSource(
    name="factualbio",
    title="FactualBio: 21 GPT-4 biographies with sentence and fact labels",
    licence="unclear: jlko/long_hallucinations has no licence file",
    files=(
        _derived(
            "factualbio/factualbio.json",
            "a25ba6c804980073ac050846f509fef742bd4a385ba635fcadd465e492ec7922",
            25_272,
            "the records of data.py in jlko/long_hallucinations@957b806033d0b769db34beb7ce34316bd498f373, "
            "read with ast (nothing executed) and written as JSON",
        ),
    ),
)

_SAC3 = ("intuit/sac3", "f11a7581a4216a62fb605afb3c7c9aef5cfe19ca")

#: SAC3's QA sets (intuit/sac3, folder dataset/, added in f11a7581, unchanged since).
SAC3_QA_HALU = DataSource(
    name="sac3_qa_halu",
    title="SAC3 QA hallucination sets: HotpotQA and NQ-open, 250 questions each",
    licence="Apache-2.0 (intuit/sac3); questions from HotpotQA/HaluEval (CC-BY-SA-4.0 / MIT), NQ-Open (CC-BY-SA-3.0)",
    files=(
        _github(
            *_SAC3,
            "dataset/hotpotQA_250_eval_labeled-SC.json",
            "sac3_qa_halu/hotpotQA_250_eval_labeled-SC.json",
            "f177fc2ac765cb940ff2cce5748923e69dcd3ab34d17182854cf3aaabf031700",
            1_365_465,
        ),
        _github(
            *_SAC3,
            "dataset/nq_open_250_eval_labeled-SC.json",
            "sac3_qa_halu/nq_open_250_eval_labeled-SC.json",
            "dccda452bcfcf74b1d028fd37c81f932417fdd85cc1dc231b7e032fd7dcfb991",
            1_191_973,
        ),
    ),
)

_CONCEPT7 = ("soap117/Self-evaluation", "934016341276ca1f67c7898f5b7a5ba86a5afd89")


def _concept7_labels(name: str, sha256: str, size: int) -> SourceFile:
    """A label file of Concept-7: the source repository holds it as a pickle only."""
    pickle = name.rsplit(".", 1)[0] + ".pkl"
    hint = (
        f"a JSON copy of data/{pickle} in {_CONCEPT7[0]}@{_CONCEPT7[1]} "
        "(its contents as JSON, read without running the pickle)"
    )
    return _derived(f"concept7_self_familiarity/{name}", sha256, size, hint)


#: Concept-7 (Luo et al., 2023), released with the paper's code in soap117/Self-evaluation:
#: the test and basic concepts (CSV), the word-frequency list Self-Familiarity ranks concepts
#: by (hallulab.artifacts.concepts), and the familiarity labels, which are pickles there.
CONCEPT7 = DataSource(
    name="concept7",
    title="Concept-7 (Self-Familiarity): 180 test concepts, 192 basic concepts, familiarity labels",
    licence="unclear: soap117/Self-evaluation states none",
    files=(
        _github(
            *_CONCEPT7,
            "data/data_knowledge_7_general_multi.csv",
            "concept7_self_familiarity/data_knowledge_7_general_multi.csv",
            "6ed57a7680b2b9ae54110d5fec05c59dc1713f40fe91fb5ccefb4f8004d63e6d",
            266_140,
        ),
        _github(
            *_CONCEPT7,
            "data/data_common.csv",
            "concept7_self_familiarity/data_common.csv",
            "5e31720d7e95dccb3242d44ce6b490fd4891f7c2c9c8cc3925b39e6436fbe9fd",
            6_145,
        ),
        _github(
            *_CONCEPT7,
            "data/wiki-100k.txt",
            "concept7_self_familiarity/wiki-100k.txt",
            "e65d99cd074785c2cefc222b3066208e3f229cfb7d53f5734ac5b409ebea1bf2",
            823_537,
        ),
        _concept7_labels(
            "vicuna-13b-v1.3-7-messages.json",
            "dcd41b7f7c390b7c38ab1f7e2e462022f2060e7db3a193993cf0aec2b88e47a7",
            309_164,
        ),
        _concept7_labels(
            "falcon-7b-instruct-7-messages.json",
            "55353db7ef2e58e70029d6c30f057486577ad63f788563354a908395d2740823",
            293_258,
        ),
        _concept7_labels(
            "mpt-7b-instruct-7-messages.json",
            "2b9b40fcfbbd88abbe35147a2abf54223da458c645bae4a27334d8676f2df16c",
            279_630,
        ),
        _concept7_labels(
            "alpaca-native-7-messages.json",
            "11ceff31c91ddc8d3dee8fb281b74b1356cb3dd66e91ba4107130efcb6cb6c81",
            288_304,
        ),
        _concept7_labels(
            "vicuna-13b-v1.3-7-human-anno.json",
            "1bd7a6075e859dee23b7e4e8d748eca32d04f35e0943f02b1f2bcf62fd5d3bbb",
            6_743,
        ),
    ),
)

_ANLI = ("eric11eca/curriculum-ling", "1c79904f9be35204e1bd8c760fea5c8180d10b39")
_ANLI_FILES = (
    ("R1/dev.jsonl", "4d6a01499b91046be7aa9daf1d1e716261b0c08698962b23389477c8400064e2", 705_417),
    ("R1/test.jsonl", "11b257c63a3caa825b80ac86b6d895407c62616d56036482344344099e7d3fa5", 706_432),
    ("R2/dev.jsonl", "7b90cd9c9cb7d8ff12bc31257a56bf219718704c5798faf3b295b9e94b14b889", 687_335),
    ("R2/test.jsonl", "804dbe173fbe08e6e069db8811016ebe5e065dfd1c47ed741dac6d8816f4fadc", 704_696),
    ("R3/dev.jsonl", "42eca71392a3c90ee0dc83bb2cedb45165279f903a9c706bf11337be11c469bd", 814_872),
    ("R3/test.jsonl", "fe456c2935f71d7ffe49bd8d95c2b2355f7383f72423c3018fa40479992f0004", 810_487),
    ("README.txt", "2f38ae0f273d696af51896ef82d3bf861bdb6c511de918b94b17132e9c24aaf3", 1_381),
)

_ESNLI = ("OanaMariaCamburu/e-SNLI", "38f9d62ad6da930d0575e97bafa26023822130a5")
_ESNLI_FILES = (
    ("s1.test", "62cb8107dc3c56a4376e5e521842be24e0d61c92c346b94917da2bbf2a47d8be", 738_834),
    ("s2.test", "1174f3ad30a3c30fc0f9eeffc1b3b6a79e0514026c5a658968a8e2a324b311a1", 398_274),
    ("labels.test", "e25c363e5cc70d5494d6e6555d8053eced22dca836e0f03067530eaad3d4f5f5", 108_118),
)

_FEVER = ("GGKorn/fever-nli", "83a4e60e3604a14b348301659109c68d9b40bc65")
_FEVER_FOLDER = "data/vanilla_wiki_data/unsorted_vanilla_batched_wiki_data"
#: chunk -> (raw sha256, raw bytes, .gz sha256, .gz bytes)
_FEVER_CHUNKS = (
    (
        "49ff75c5f285ea0a84d7e47a921f4c3869ffc59fdcadebf5eeed8a522eb7fc5e",
        3_920_228,
        "ea81f68d466d6b5b43cd7f57ccaad2346836bf624740fec16da3738e2dd49fc0",
        1_190_413,
    ),
    (
        "bdecc329a2efc6db19969518f8910179dab3290ca89114b8cdf36f61affd542c",
        3_883_247,
        "704193b22438a4e3dc38f6c5b989bc6cfdf41ba547eccbcaf74b483ef07534d5",
        1_186_773,
    ),
    (
        "e52990baa56872292220fe7d21bb5e2713b7459a95a866625b424212537afd84",
        3_911_882,
        "5807c517bbc29752dc85b2d4d5886624c60c780214c49f9f8a373687182b0850",
        1_184_434,
    ),
    (
        "12730128340eb5f29c10bd3ec038e8f2a909098a6af0f1e268e58ada7cbd598c",
        3_923_872,
        "3d6a92f9e0b59de84700922cd804e9e4c72357fb3a2449a14d1cba9d0617cadb",
        1_200_924,
    ),
    (
        "146bc90bd12b014edd0628854d31229c6d28849d217db526c7260de519898975",
        4_025_610,
        "65af5316488406dc6fb4584f7f69ff213d1b750ef5ca9d881de020f04d6d1c9e",
        1_216_936,
    ),
    (
        "96d8f440b8adaae1eea93a026d40ef3a97f4ae421dae21ddba966f97e50101ed",
        3_910_885,
        "9ae7e3f41b010c1eb84854abb12828b385de688e81c3644d1fd800ab4bc6f136",
        1_188_757,
    ),
    (
        "e30c351b1bb2d0950dff942a7863be0e7b8d0dc18067502646b78caa6b854058",
        4_005_577,
        "965ca4d676e8569f232eff238f5adbfa114fe60c5e1cb3346e341937bf5e9d06",
        1_200_350,
    ),
    (
        "7740e03d50a47a093a4fe75ab936aff0d9b19c4b2a8263cd29c8fc53f5831e34",
        3_865_812,
        "a6b2f288b927b4db1d13a454534bce6e9b915edf0f0c676f8f6b9623500bf2f6",
        1_180_238,
    ),
    (
        "f43737aeb637a2e2d743ad754d1d3d40640335dbfa38045bbf6e732b9b5263a9",
        3_858_657,
        "0f0bbc35b1d7a7f1e5f2a27e96cfff3ea87d8bbc0574cee8e2e9b6b6c7c8ba0d",
        1_188_478,
    ),
    (
        "6226bb09d11a7694139f6531bacfc46d1954721f138d6f847eacdefc2d8e086a",
        3_905_738,
        "09ecb853930d83fe51d442d25263c72cd904f054c747cb6e128bf4137f00b795",
        1_189_184,
    ),
    (
        "c33edd9f7bdacb2eaea3d7a95eb5002891138cde6ac532567f0dfb54140e6a6d",
        4_094_531,
        "d56c4b1793de547833f93dc254d41df9a3efa29e2e1aa35399fe80b6d94bef35",
        1_222_178,
    ),
    (
        "7737d6a7b42dc6a0c6a4babc63517191010d571c06ccc5804ceee9fc4a31db87",
        3_967_348,
        "2631d1dc53a90cffe62c2925ec4b17c007420524b17af10f7f04da1359e62f88",
        1_203_924,
    ),
    (
        "d589ccdbb57f510499f82ed7f6a766ffb15dee267cdea92f4652d61944f77e9c",
        3_977_543,
        "b7a879fba627af4b7083e95d547ead507a4c1b4104c440c92190fc56089a4c29",
        1_213_531,
    ),
    (
        "26c6cb58554f55cb58090247bd5ffc09a0ee54b1dfb169793f60338a7201b06f",
        3_829_189,
        "c917564c5b4ecae2abfbf7732cf5b42fdf65b4c4a01b2ff8d1475e4a958d50df",
        1_178_268,
    ),
    (
        "605571aa54de89b7653069089fdc23d438b8ba8e7dd3a6881858c040a21e7da2",
        2_273_324,
        "d54e93205b5e986bfb51e3e8ea625874d7e134e0d7cea3f8bfed3f3a01345351",
        671_180,
    ),
)


def _fever_chunk(index: int) -> SourceFile:
    raw_sha256, raw_size, gz_sha256, gz_size = _FEVER_CHUNKS[index]
    return SourceFile(
        target=f"nli/fever_vanilla/split_wiki_data_{index}.csv.gz",
        sha256=gz_sha256,
        size=gz_size,
        source=GitHubFile(*_FEVER, f"{_FEVER_FOLDER}/split_wiki_data_{index}.csv"),
        derive="gzip",
        source_sha256=raw_sha256,
        source_size=raw_size,
    )


#: The NLI corpora the offline NLI model is trained and tested on (hallulab.nli.data reads
#: them; ``train_nli``). ANLI's README.txt and Climate-FEVER are not read by a reader but are
#: in the ``nli_corpora`` fingerprint (every file under nli/), so they are fetched too: a
#: fetched root then gives the committed fingerprint. ANLI is pinned where curriculum-ling
#: still held it (removed later); the FEVER chunks where fever-nli added them (removed later).
NLI = DataSource(
    name="nli",
    title="NLI corpora for the offline NLI model: MNLI (TaxiNLI), SNLI, SICK, FEVER, ANLI, XNLI, Climate-FEVER",
    licence=(
        "per corpus: ANLI CC BY-NC 4.0; TaxiNLI C-UDA 1.0 over MultiNLI text; SICK CC BY-NC-SA 3.0; "
        "SNLI CC BY-SA 4.0; XNLI CC BY-NC 4.0; FEVER and Climate-FEVER: none stated in their repositories"
    ),
    files=(
        *(
            _github(*_ANLI, f"data/anli_v1.0/{name}", f"nli/anli_v1.0/{name}", sha256, size)
            for name, sha256, size in _ANLI_FILES
        ),
        _github(
            "microsoft/TaxiNLI",
            "d911247b9c317b85252ec813163d6b9ce2f703bd",
            "taxinli10k.tsv",
            "nli/mnli_taxinli/taxinli10k.tsv",
            "941fe241f5bc673a5248a86511f6e6368658a9b6c61a0ea8068411b8561521b2",
            2_636_312,
        ),
        _github(
            "kkalouli/SICK-processing",
            "b55cf253c6ae9f5b5c9b287184e34147a5d7fc67",
            "SICK.txt",
            "nli/sick/SICK.txt",
            "1539c2d059809b5bd40694e26d8121cc85b6b496f91c7b40f2fc83bbd7dcd957",
            2_432_648,
        ),
        _github(
            "felipessalvatore/NLI_datasets",
            "cea2ece46fc9b713918c63b5939cfd77863718af",
            "nli_datasets/snli/dev.csv",
            "nli/snli/dev.csv",
            "af9cc200896596e96b04ceb752b7ee66200910ab22eda7daaa4fe70ebb44e8b3",
            1_214_731,
        ),
        *(
            _github(*_ESNLI, f"dataset/eSNLI/{name}", f"nli/snli/esnli_test/{name}", sha256, size)
            for name, sha256, size in _ESNLI_FILES
        ),
        _github(
            "GautamGupta17/MESH",
            "8325b2bc0c537c553864742ce6aec6b6fded2964",
            "data/xnli/dev-en.tsv",
            "nli/xnli_en/dev-en.tsv",
            "d3899b7562dbba9418124a9a5fcd01bb78816bf724e8f301af15c6845a338c88",
            425_993,
        ),
        *(_fever_chunk(i) for i in range(len(_FEVER_CHUNKS))),
        _github(
            "tdiggelm/climate-fever-dataset",
            "336f0a46c98920a6f40926385ce71ba877a7b863",
            "dataset/climate-fever.jsonl",
            "nli/climate_fever/climate-fever.jsonl",
            "8a4b9032d861be482ffb49dddfd283ffa6089e654f1e968040011882c5eb6e0b",
            3_152_039,
        ),
    ),
)

#: Every data set, in the order ``hallulab data list`` shows them.
DATA_SOURCES: tuple[DataSource, ...] = (WIKIBIO, FACTUALBIO, SAC3_QA_HALU, CONCEPT7, NLI)


#: The pipeline's data sets (``-S dataset=<name>``, conf/dataset) whose files come in a data set
#: of another name here: ``hallulab data fetch nq_open`` fetches ``sac3_qa_halu``. The others
#: (``wikibio``, ``factualbio``, ``concept7``) have the same name in both.
DATASET_SOURCES: dict[str, str] = {"nq_open": "sac3_qa_halu", "hotpotqa": "sac3_qa_halu"}


def data_source(name: str) -> DataSource:
    """The manifest entry called ``name``, or the one a pipeline data set of that name comes
    from (:data:`DATASET_SOURCES`)."""
    wanted = DATASET_SOURCES.get(name, name)
    for source in DATA_SOURCES:
        if source.name == wanted:
            return source
    known = ", ".join(s.name for s in DATA_SOURCES)
    aliases = ", ".join(f"{alias} (in {source})" for alias, source in DATASET_SOURCES.items())
    raise UnknownDataSourceError(f"unknown data set {name!r}; known: {known}; also {aliases}")


# --- checking what is there ----------------------------------------------------------------


def is_in_place(file: SourceFile, root: Path) -> bool:
    """Whether ``root/target`` exists with the pinned size and sha256."""
    path = root / file.target
    return path.is_file() and path.stat().st_size == file.size and file_sha256(path) == file.sha256


def missing_files(source: DataSource, root: Path) -> tuple[SourceFile, ...]:
    """The files of ``source`` not in place under ``root`` (absent, or another sha256)."""
    return tuple(f for f in source.files if not is_in_place(f, root))


# --- downloading ---------------------------------------------------------------------------


def _one_line(text: object) -> str:
    return " ".join(str(text).splitlines())


def check_base_url(base_url: str | None) -> None:
    """A ``base_url`` must be an http(s) or file URL (a mirror laid out as GitHub's raw files)."""
    if base_url is None:
        return
    parts = urllib.parse.urlsplit(base_url)
    if parts.scheme not in BASE_URL_SCHEMES or (parts.scheme != "file" and not parts.netloc):
        raise FetchError(f"--base-url {base_url!r}: expected an http://, https:// or file:// URL")


#: the suffixes of the temporary files a download writes beside its target
PART_SUFFIXES = (".part", ".gz.part")


def _partial_downloads(target: Path) -> list[Path]:
    """The temporary files beside ``target`` that a download of it writes (:func:`_temporary_beside`)."""
    if not target.parent.is_dir():
        return []
    prefix = f".{target.name}."
    return [
        path
        for path in target.parent.iterdir()
        if path.name.startswith(prefix) and path.name.endswith(PART_SUFFIXES) and path.is_file()
    ]


@contextmanager
def _locked(root: Path) -> Iterator[None]:
    """Hold an exclusive lock on the folder ``root`` (made if need be) until the block ends; a
    second holder waits. The lock is the folder's own, so it leaves no file behind. A file
    system that locks no folder (some network mounts) runs the block unlocked: two fetches
    into one such root at once are not kept apart."""
    blocking = next((p for p in (root, *root.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise FetchError(f"data root {root}: {blocking} is a file, not a folder")
    root.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(root, os.O_RDONLY)
    try:
        with suppress(OSError):
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # closing the last descriptor releases the lock


@contextmanager
def _temporary_beside(target: Path, suffix: str) -> Iterator[Path]:
    """A new temporary file in the target's folder, removed on the way out unless renamed away.
    Created with mode 0o666 less the umask, as the renamed data file should be (mkstemp's 0o600
    would hide a shared data root's files from other users)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    path = target.parent / f".{target.name}.{secrets.token_hex(8)}{suffix}"
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def _download(url: str, into: Path, limit: int, opener: Opener) -> tuple[str, int]:
    """Stream ``url`` into the file ``into``, reading at most ``limit + 1`` bytes; returns the
    sha256 and size of what was received."""
    digest, size = hashlib.sha256(), 0
    try:
        with opener(url, timeout=REQUEST_TIMEOUT_S) as response, into.open("wb") as out:
            while size <= limit:
                block = response.read(min(CHUNK_BYTES, limit + 1 - size))
                if not block:
                    break
                digest.update(block)
                out.write(block)
                size += len(block)
            out.flush()
            os.fsync(out.fileno())
    except urllib.error.HTTPError as error:
        raise DownloadError(f"{url}: HTTP {error.code} {_one_line(error.reason)}") from error
    except urllib.error.URLError as error:
        raise DownloadError(f"{url}: {_one_line(error.reason)}") from error
    except (OSError, http.client.HTTPException) as error:
        raise DownloadError(f"{url}: {_one_line(error) or type(error).__name__}") from error
    return digest.hexdigest(), size


def _check(url: str, what: str, sha256: str, size: int, want_sha256: str, want_size: int) -> None:
    if size > want_size:
        raise ChecksumError(f"{url}: {what} more than the pinned {want_size} bytes (sha256 {want_sha256})")
    if size != want_size or sha256 != want_sha256:
        raise ChecksumError(
            f"{url}: {what} sha256 {sha256} ({size} bytes); expected sha256 {want_sha256} ({want_size} bytes)"
        )


def gzip_file(raw: Path, out: Path, url: str) -> None:
    """``gzip -9 -n`` of ``raw`` into ``out`` (no name, no timestamp: the same bytes every time)."""
    gzip = shutil.which("gzip")
    if gzip is None:
        raise FetchError(f"{url}: compressing it needs GNU gzip on PATH (gzip -9 -n gives the pinned bytes)")
    env = {k: v for k, v in os.environ.items() if k != "GZIP"}  # GZIP would add options
    with raw.open("rb") as source, out.open("wb") as sink:
        try:
            command = [gzip, "-9", "-n", "-c"]
            done = subprocess.run(
                command, stdin=source, stdout=sink, stderr=subprocess.PIPE, env=env, timeout=GZIP_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired as error:
            raise FetchError(f"{url}: gzip did not finish within {GZIP_TIMEOUT_S:g} s") from error
    if done.returncode != 0:
        raise FetchError(f"{url}: gzip failed: {_one_line(done.stderr.decode(errors='replace'))}")


def _fetch_file(file: SourceFile, root: Path, base_url: str | None, opener: Opener) -> FileResult:
    """Download one file (and compress it for ``gzip``) beside its target, check it, rename it."""
    assert file.source is not None
    url = file.source.url(base_url)
    target = root / file.target
    outcome: Outcome = "replaced" if target.exists() else "fetched"
    with _temporary_beside(target, ".part") as part:
        sha256, size = _download(url, part, file.fetched_size, opener)
        _check(url, "received", sha256, size, file.fetched_sha256, file.fetched_size)
        if file.derive == "gzip":
            with _temporary_beside(target, ".gz.part") as packed:
                gzip_file(part, packed, url)
                _check(url, "gzip -9 -n of it has", file_sha256(packed), packed.stat().st_size, file.sha256, file.size)
                os.replace(packed, target)
        else:
            os.replace(part, target)
    return FileResult(target, outcome, url)


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def _no_source_message(source: DataSource, missing: list[SourceFile], root: Path, in_place: int) -> str:
    parts = []
    for file in missing:
        there = " (the file there has another sha256)" if (root / file.target).exists() else ""
        parts.append(f"put {root / file.target}{there} (sha256 {file.sha256}, {file.size} bytes): {file.missing_hint}")
    head = f"{source.name}: {_files(len(missing))} with no public source to fetch"
    tail = f" ({in_place} of its {len(source.files)} files in place)" if in_place else ""
    return _one_line(f"{head}{tail}; " + "; ".join(parts))


def fetch(
    name: str,
    root: Path,
    base_url: str | None = None,
    opener: Opener = urllib.request.urlopen,
    on_file: Callable[[FileResult], None] | None = None,
) -> FetchReport:
    """Fetch data set ``name`` into ``root``: every file with a public source that is not
    already there with its pinned sha256; ``on_file`` hears of each file as it is done.

    ``base_url`` replaces :data:`GITHUB_RAW` (a mirror, or a test's server). A file there with
    another sha256 is replaced. Raises :class:`DownloadError` (HTTP or connection error) or
    :class:`ChecksumError` (other bytes than pinned) naming the URL, with nothing written for
    that file; and :class:`NoPublicSourceError` after fetching the rest when a file with no
    public source is not in place, naming each such file, where to put it and its sha256.
    The root is locked while the files are fetched; a partial download a killed fetch left
    beside a file is removed before that file is fetched.
    """
    source = data_source(name)
    check_base_url(base_url)
    results: list[FileResult] = []
    no_source: list[SourceFile] = []
    with _locked(root):
        for file in source.files:
            for stale in _partial_downloads(root / file.target):  # a killed fetch's: none runs now
                stale.unlink(missing_ok=True)
            if is_in_place(file, root):
                result = FileResult(root / file.target, "present", file.source.url(base_url) if file.source else None)
            elif file.source is None:
                no_source.append(file)
                continue
            else:
                result = _fetch_file(file, root, base_url, opener)
            results.append(result)
            if on_file is not None:
                on_file(result)
    if no_source:
        raise NoPublicSourceError(_no_source_message(source, no_source, root, len(results)))
    return FetchReport(source.name, root, tuple(results))
