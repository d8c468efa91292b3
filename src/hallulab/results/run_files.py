"""The tracked files a run rewrites that no results file holds, and putting them back.

``dvc exp run -S dataset=...`` (what ``make result`` and each benchmark cell run) composes the
run's settings into ``params.yaml`` and records the run's stages in ``dvc.lock``: both then
describe that run, not the commit, although what the run publishes (its results file, a cell's
units and cost) holds the settings itself. A benchmark cell puts both back as it found them when
it ends, failed or interrupted included (:func:`kept_as_found`); ``make result`` leaves them for
the commands that read the run's settings after it (``python -m hallulab.benchmark units``) and
ends with one line naming them and the command that restores them (:func:`note`)::

    python -m hallulab.results run-files
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

#: what a run rewrites in the checkout that no results file holds
RUN_FILES = ("params.yaml", "dvc.lock")


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def _put_back(path: Path, content: bytes | None) -> None:
    if content is None:
        path.unlink(missing_ok=True)
        return
    partial = path.with_name(f".{path.name}.restoring")
    partial.write_bytes(content)
    os.replace(partial, path)


def _exit_on_terminate(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


@contextmanager
def kept_as_found(root: Path, names: Sequence[str] = RUN_FILES) -> Iterator[list[str]]:
    """Run the block, then put ``names`` (relative to ``root``) back byte for byte as they were
    before it (a file that was not there is removed), also when the block fails, is
    interrupted (Ctrl-C) or terminated (SIGTERM, turned into ``SystemExit`` meanwhile). The
    list it yields is filled, on leaving, with the names it had to put back."""
    saved = {name: _read(root / name) for name in names}
    restored: list[str] = []
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _exit_on_terminate) if in_main else None
    try:
        yield restored
    finally:
        for name, content in saved.items():
            if _read(root / name) != content:
                _put_back(root / name, content)
                restored.append(name)
        if in_main:
            signal.signal(signal.SIGTERM, previous)


def tracked_changes(root: Path) -> set[str]:
    """The tracked files under ``root`` that differ from git's index or ``HEAD`` (empty outside
    git)."""
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True, text=True, check=False
    )
    return {line[3:] for line in done.stdout.splitlines()} if done.returncode == 0 else set()


def restore_line(changed: Sequence[str], what: str) -> str:
    """One line: what changed ``changed``, and the command that restores them."""
    listed = " ".join(changed)
    return f"{', '.join(changed)}: {what}; `git checkout -- {listed}` restores the committed ones"


def note(root: Path = Path("."), names: Sequence[str] = RUN_FILES) -> str | None:
    """``make result``'s last line: which of ``names`` differ from git (the run's settings and
    lock), and how to restore them; None when none does."""
    changed = sorted(tracked_changes(root) & set(names), key=list(names).index)
    if not changed:
        return None
    return restore_line(changed, "now describe this run (dvc exp run wrote them; the results file holds its settings)")
