"""``hallulab data fetch``: the manifest pins the real files, and a fetch over real HTTP writes
exactly them.

The server is :class:`http.server.ThreadingHTTPServer` on loopback, serving a folder laid out as
GitHub's raw files (``<repository>/<commit>/<path>``) built from the local copies under the data
root; nothing here reaches the network beyond 127.0.0.1.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hallulab import cli
from hallulab.core.config import compose, dataset_config
from hallulab.core.io import file_sha256
from hallulab.data import fetch as fetching
from hallulab.data.concept7 import LABEL_SOURCES, concept7_files
from hallulab.data.fingerprints import DataFileInputs, fingerprint
from hallulab.data.loaders import DATA_ROOT_ENV, data_root
from tests.conftest import REPO, requires_data_root

#: hang guard for the CLI subprocesses
CLI_TIMEOUT_S = 120

#: the data sets a config of conf/dataset reads from the data root, by loader
ROOT_LOADERS = ("wikibio", "factualbio", "sac3", "concept7")


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@dataclass(frozen=True)
class Mirror:
    url: str
    folder: Path

    def served(self, file: fetching.SourceFile) -> Path:
        assert file.source is not None
        return self.folder / file.source.repository / file.source.commit / file.source.path

    def url_of(self, file: fetching.SourceFile) -> str:
        assert file.source is not None
        return f"{self.url}/{file.source.repository}/{file.source.commit}/{file.source.path}"


def _real_root() -> Path:
    root = data_root()
    assert root is not None, f"{DATA_ROOT_ENV} must be set"
    return root


def _lay_out(mirror: Mirror, source: fetching.DataSource, root: Path) -> None:
    """The repository files of ``source`` as GitHub serves them, from the copies under ``root``."""
    for file in source.files:
        if file.source is None:
            continue
        served = mirror.served(file)
        served.parent.mkdir(parents=True, exist_ok=True)
        if file.derive == "gzip":
            served.write_bytes(gzip.decompress((root / file.target).read_bytes()))
        else:
            shutil.copyfile(root / file.target, served)


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[Mirror]:
    """A loopback HTTP server of the SAC3 and Concept-7 sources; shut down after the test."""
    folder = tmp_path / "served"
    folder.mkdir()
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        served = Mirror(f"http://127.0.0.1:{server.server_address[1]}", folder)
        for source in (fetching.data_source("sac3_qa_halu"), fetching.data_source("concept7")):
            _lay_out(served, source, _real_root())
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def _hallulab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hallulab.cli", *args],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


# --- the manifest ---------------------------------------------------------------------------


@requires_data_root
def test_every_manifest_sha256_matches_the_file_under_the_data_root() -> None:
    root = _real_root()
    checked = 0
    for source in fetching.DATA_SOURCES:
        for file in source.files:
            path = root / file.target
            if not path.is_file():
                continue
            assert (path.stat().st_size, file_sha256(path)) == (file.size, file.sha256), file.target
            if file.derive == "gzip":
                raw = gzip.decompress(path.read_bytes())
                assert len(raw) == file.source_size, file.target
                assert hashlib.sha256(raw).hexdigest() == file.source_sha256, file.target
            checked += 1
    assert checked, f"no manifest file under {root}"


@requires_data_root
@pytest.mark.skipif(shutil.which("gzip") is None, reason="GNU gzip is not on PATH")
def test_gzip_of_the_raw_chunk_reproduces_the_pinned_file(tmp_path: Path) -> None:
    """Decompress a FEVER chunk, compress it as fetch does: the pinned bytes come back."""
    file = next(f for f in fetching.data_source("nli").files if f.target.endswith("split_wiki_data_14.csv.gz"))
    raw = tmp_path / "raw.csv"
    raw.write_bytes(gzip.decompress((_real_root() / file.target).read_bytes()))
    fetching.gzip_file(raw, tmp_path / "again.csv.gz", "test")
    assert file_sha256(tmp_path / "again.csv.gz") == file.sha256


def test_the_nli_files_are_the_data_roots_nli_fingerprint() -> None:
    """``data_files`` fingerprints every file under nli/ for a recipe that reads the data
    root: a fetched root must give the same files and bytes as the pinned manifest."""
    inputs = DataFileInputs(("mnli",), None, "auto", "x.txt")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(DATA_ROOT_ENV, str(_real_root()))
        found = fingerprint("nli_corpora", inputs)["files"]
    pinned = {f.target.removeprefix("nli/"): f.sha256 for f in fetching.data_source("nli").files}
    assert pinned == found


def test_the_manifest_holds_every_file_the_configs_read() -> None:
    targets = {f.target for source in fetching.DATA_SOURCES for f in source.files}
    wanted: set[str] = set()
    for config in sorted((REPO / "conf" / "dataset").glob("*.yaml")):
        cfg = dataset_config(config.stem)
        if cfg["loader"] == "concept7":
            wanted.update(name for label in LABEL_SOURCES for name in concept7_files({**cfg, "labels_from": label}))
        elif cfg["loader"] in ROOT_LOADERS:
            wanted.add(cfg["local_file"])
    wanted.add(compose([])["concepts"]["word_list_file"])
    assert wanted - targets == set()
    assert {"sac3_qa_halu/hotpotQA_250_eval_labeled-SC.json", "factualbio/factualbio.json"} <= wanted


def test_the_cli_help_names_the_manifest_defaults() -> None:
    assert cli.DATA_ROOT_ENV_NAME == DATA_ROOT_ENV
    assert cli.GITHUB_RAW_URL == fetching.GITHUB_RAW


# --- fetching over HTTP ---------------------------------------------------------------------


@requires_data_root
def test_fetch_writes_every_file_with_its_sha256_and_a_second_fetch_skips_them(mirror: Mirror, tmp_path: Path) -> None:
    root = tmp_path / "root"
    source = fetching.data_source("sac3_qa_halu")
    heard: list[fetching.FileResult] = []
    report = fetching.fetch(source.name, root, base_url=mirror.url, on_file=heard.append)
    assert [r.outcome for r in report.files] == ["fetched"] * len(source.files)
    assert list(report.files) == heard
    for file, result in zip(source.files, report.files, strict=True):
        assert result.target == root / file.target
        assert result.url == mirror.url_of(file)
        assert file_sha256(root / file.target) == file.sha256
    assert _files_under(root) == sorted(root / f.target for f in source.files)  # no temporary file left

    again = fetching.fetch(source.name, root, base_url=mirror.url)
    assert [r.outcome for r in again.files] == ["present"] * len(source.files)
    assert again.fetched == ()


@requires_data_root
def test_a_changed_byte_is_a_one_line_sha256_error_and_nothing_is_written(mirror: Mirror, tmp_path: Path) -> None:
    root = tmp_path / "root"
    file = fetching.data_source("sac3_qa_halu").files[0]
    served = mirror.served(file)
    data = bytearray(served.read_bytes())
    data[len(data) // 2] ^= 0x01
    served.write_bytes(bytes(data))
    with pytest.raises(fetching.ChecksumError) as caught:
        fetching.fetch("sac3_qa_halu", root, base_url=mirror.url)
    message = str(caught.value)
    assert "\n" not in message
    assert mirror.url_of(file) in message
    assert file.sha256 in message
    assert hashlib.sha256(bytes(data)).hexdigest() in message
    assert _files_under(root) == []


@requires_data_root
def test_a_missing_url_is_a_one_line_error_naming_it(mirror: Mirror, tmp_path: Path) -> None:
    file = fetching.data_source("sac3_qa_halu").files[1]
    mirror.served(file).unlink()
    with pytest.raises(fetching.DownloadError) as caught:
        fetching.fetch("sac3_qa_halu", tmp_path / "root", base_url=mirror.url)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{mirror.url_of(file)}: ")
    assert "404" in message
    assert not (tmp_path / "root" / file.target).exists()


@requires_data_root
def test_concept7_fetches_what_it_can_then_names_the_label_files_to_put(mirror: Mirror, tmp_path: Path) -> None:
    root = tmp_path / "root"
    with pytest.raises(fetching.NoPublicSourceError) as caught:
        fetching.fetch("concept7", root, base_url=mirror.url)
    message = str(caught.value)
    assert "\n" not in message
    for file in fetching.data_source("concept7").files:
        if file.source is None:
            assert f"{root / file.target} (sha256 {file.sha256}" in message
            assert not (root / file.target).exists()
        else:
            assert file_sha256(root / file.target) == file.sha256


def test_wikibio_has_no_public_source_and_the_error_says_what_to_put_where(tmp_path: Path) -> None:
    (file,) = fetching.data_source("wikibio").files
    with pytest.raises(fetching.NoPublicSourceError) as caught:
        fetching.fetch("wikibio", tmp_path)
    message = str(caught.value)
    assert "\n" not in message
    assert f"put {tmp_path / file.target} (sha256 {file.sha256}, {file.size} bytes)" in message
    assert "potsawee/wiki_bio_gpt3_hallucination" in message and DATA_ROOT_ENV in message
    assert _files_under(tmp_path) == []


def test_an_unknown_name_or_base_url_is_refused(tmp_path: Path) -> None:
    with pytest.raises(fetching.UnknownDataSourceError, match="known: wikibio, factualbio"):
        fetching.fetch("wiki", tmp_path)
    with pytest.raises(fetching.FetchError, match="--base-url"):
        fetching.fetch("sac3_qa_halu", tmp_path, base_url="127.0.0.1:8000")


# --- the command ----------------------------------------------------------------------------


@requires_data_root
def test_the_cli_fetches_into_the_root(mirror: Mirror, tmp_path: Path) -> None:
    root = tmp_path / "root"
    done = _hallulab("data", "fetch", "sac3_qa_halu", "--root", str(root), "--base-url", mirror.url)
    assert done.returncode == 0, done.stderr
    for file in fetching.data_source("sac3_qa_halu").files:
        assert f"fetched: {root / file.target} <- {mirror.url_of(file)}" in done.stdout
        assert file_sha256(root / file.target) == file.sha256
    assert "sac3_qa_halu: 2 fetched, 0 already present" in done.stdout


def test_data_list_names_every_data_set(tmp_path: Path) -> None:
    done = _hallulab("data", "list", "--root", str(tmp_path))
    assert done.returncode == 0, done.stderr
    for source in fetching.DATA_SOURCES:
        assert f"{source.name} " in done.stdout
        assert f"licence: {source.licence}" in done.stdout
    assert "complete" not in done.stdout  # an empty root holds none


def test_data_fetch_without_a_root_says_how_to_give_one(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != DATA_ROOT_ENV}
    done = subprocess.run(
        [sys.executable, "-m", "hallulab.cli", "data", "fetch", "sac3_qa_halu"],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert f"hallulab data: error: no data root to fetch into: pass --root DIR or set {DATA_ROOT_ENV}" in done.stderr
