"""Atomic file writes and JSON / JSONL helpers used by every stage.

A write goes to a temporary file in the destination folder, is flushed and fsynced,
and is renamed over the target, so a killed run never leaves a half-written output
that DVC (or the next stage) would mistake for a finished one.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from hallulab.core.errors import UserFacingError


def _create_beside(target: Path) -> tuple[int, str]:
    """A new file beside ``target`` (a name no other file has), opened for writing with mode
    0666 less the umask; its descriptor and path."""
    for _ in range(100):
        name = str(target.parent / f".{target.name}.{secrets.token_hex(8)}.tmp")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {target}")


@contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary sibling of ``path`` for writing; rename it over ``path`` on success.

    The temporary file is created with mode 0666 less the umask (0644 under the usual 022),
    the mode a plain ``open`` gives a new file, so the file renamed over ``path`` is readable
    as any other output (``tempfile.mkstemp``'s 0600 would hide it from other users)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = _create_beside(target)
    try:
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
        raise


def write_json(path: str | os.PathLike[str], payload: Any, *, indent: int | None = 2) -> None:
    """Atomically write ``payload`` as UTF-8 JSON (keys kept in insertion order)."""
    with atomic_open(path) as handle:
        json.dump(payload, handle, indent=indent, ensure_ascii=False, allow_nan=False)
        handle.write("\n")


def write_jsonl(path: str | os.PathLike[str], rows: Iterable[Any]) -> int:
    """Atomically write one JSON object per line; returns the number of rows."""
    count = 0
    with atomic_open(path) as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, allow_nan=False))
            handle.write("\n")
            count += 1
    return count


class InputFileError(ValueError, UserFacingError):
    """A data file cannot be read as what it should be; names the file and line."""


class OutputPathError(ValueError, UserFacingError):
    """An output path that cannot be written: a folder on its way is a file, or it is a folder."""


def check_output_path(path: str | os.PathLike[str], flag: str) -> None:
    """Refuse, before any work, an output ``path`` (given as ``flag``) that names a folder, or
    whose nearest existing folder on its way is a file (writing would fail only at the end)."""
    target = Path(path)
    if target.is_dir():
        raise OutputPathError(f"{flag} {target}: is a folder; name a file to write")
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                raise OutputPathError(f"{flag} {target}: {parent} is a file, not a folder")
            return


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, object)``; a malformed or non-UTF-8 line raises naming the file
    and line (:class:`InputFileError`)."""
    with open(path, "rb") as handle:
        for line_number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise InputFileError(
                    f"{path}:{line_number}: not UTF-8 (byte {raw[error.start]:#04x} at column {error.start + 1}); "
                    "re-encode the file as UTF-8"
                ) from None
            if not line.strip():
                continue
            try:
                yield line_number, json.loads(line)
            except json.JSONDecodeError as error:
                raise InputFileError(f"{path}:{line_number}: not valid JSON ({error.msg})") from error


def read_json(path: str | os.PathLike[str]) -> Any:
    """A whole JSON file; malformed JSON or non-UTF-8 bytes raise naming the file."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except UnicodeDecodeError as error:
        raise InputFileError(f"{path}: not UTF-8 (byte offset {error.start}); re-encode the file as UTF-8") from None
    except json.JSONDecodeError as error:
        raise InputFileError(f"{path}:{error.lineno}: not valid JSON ({error.msg})") from error


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes (provenance of inputs, identity of model weights)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()
