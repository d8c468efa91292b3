"""Fetch the real data sets from their public sources into the data root (``$HALLULAB_DATA_ROOT``).

The manifest (``sources.yaml``, read into :data:`DATA_SOURCES`) pins every file the project reads under the data root:
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
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal, Protocol

import yaml

from hallulab.core.errors import UserFacingError
from hallulab.core.io import file_in_the_way, file_sha256
from hallulab.data.sets import dataset_sources

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
    #: where the files come from and how they were built, for people
    note: str = ""


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

#: The manifest as data: every file under the data root, by data source, in the order
#: ``hallulab data list`` shows them (a package data file; its head says what each field means).
SOURCES_FILE = Path(__file__).with_name("sources.yaml")


def _source_file(raw: Mapping[str, Any], where: str) -> SourceFile:
    github = raw.get("github")
    known = {"target", "sha256", "size", "github", "derive", "source_sha256", "source_size", "missing_hint"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {unknown}; a file has {sorted(known)}")
    return SourceFile(
        target=str(raw["target"]),
        sha256=str(raw["sha256"]),
        size=int(raw["size"]),
        source=None
        if github is None
        else GitHubFile(str(github["repository"]), str(github["commit"]), str(github["path"])),
        derive=raw.get("derive", "as fetched"),
        source_sha256=raw.get("source_sha256"),
        source_size=raw.get("source_size"),
        missing_hint=raw.get("missing_hint"),
    )


def read_sources(path: Path = SOURCES_FILE) -> tuple[DataSource, ...]:
    """The data sources of the manifest file ``path``; a malformed entry names it."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    sources = []
    for index, entry in enumerate(raw["sources"]):
        where = f"{path.name}: sources[{index}] ({entry.get('name')})"
        files = tuple(_source_file(item, f"{where}.files[{i}]") for i, item in enumerate(entry["files"]))
        sources.append(DataSource(entry["name"], entry["title"], entry["licence"], files, entry.get("note", "")))
    return tuple(sources)


#: Every data source, in the order ``hallulab data list`` shows them.
DATA_SOURCES: tuple[DataSource, ...] = read_sources()


def data_source(name: str) -> DataSource:
    """The manifest entry called ``name``, or the one a pipeline data set of that name comes
    from (:func:`dataset_sources`)."""
    aliases = dataset_sources()
    wanted = aliases.get(name, name)
    for source in DATA_SOURCES:
        if source.name == wanted:
            return source
    known = ", ".join(s.name for s in DATA_SOURCES)
    also = ", ".join(f"{alias} (in {source})" for alias, source in aliases.items())
    raise UnknownDataSourceError(f"unknown data set {name!r}; known: {known}; also {also}")


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
    blocking = file_in_the_way((root, *root.parents))
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
