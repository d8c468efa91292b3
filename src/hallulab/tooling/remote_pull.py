"""``make pull``: ``dvc pull`` from the team's DVC remote, refusing an object damaged there.

A remote object whose bytes no longer hash to its name (one byte changed on the share, size
kept) goes unseen by a plain ``dvc pull``: DVC checks what it downloads only when the remote's
``verify`` option is on. Without it the damaged bytes enter the cache under the good md5 and
the workspace; ``dvc status`` and ``dvc data status`` then say nothing. With it, DVC drops the
download but still reports "1 file fetched", and ``dvc pull`` fails only at the checkout, calling
the file missing ("Is your cache up to date?"), or succeeds in silence where the workspace
already holds a good copy.

This command pulls in the steps ``dvc pull`` takes, with a check between them:

1. the remote (``--remote``, else the project's default) must have ``verify`` on;
2. ``dvc fetch`` (with ``--run-cache`` when asked) downloads what the local cache lacks; DVC
   drops each object whose bytes do not hash to its md5;
3. ``dvc status --cloud`` then lists what the remote holds and the cache still lacks. After a
   fetch that succeeded, every such file is one whose download DVC dropped: its copy in the
   remote is damaged. The command names each (workspace path, the md5 ``dvc.lock`` records, the
   object in the remote), says which remote, and exits with status 2 **before** any checkout:
   the workspace, a good local copy included, is left as it was, and the cache holds nothing
   damaged;
4. else ``dvc checkout`` writes the workspace, as ``dvc pull`` would.

Only DVC's command line is used. Usage (``make pull`` passes ``--run-cache``, ``REMOTE`` and
``TARGETS``)::

    python -m hallulab.tooling.remote_pull [--remote NAME] [--run-cache] [TARGET ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from hallulab.core.errors import UserFacingError
from hallulab.tooling.dvc_command import dvc_executable

#: the documented command, as errors name it
PROG = "make pull"
LOCK = "dvc.lock"


class RemoteError(ValueError, UserFacingError):
    """A remote that cannot be pulled from safely, or a damaged or missing object in it."""


@dataclass(frozen=True)
class Remote:
    """A DVC remote as the project's config (every level merged) defines it."""

    name: str
    url: str
    verify: bool

    def __str__(self) -> str:
        return f"remote {self.name!r} ({self.url})"


def _dvc(root: Path, *args: str, capture: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([dvc_executable(), *args], cwd=root, capture_output=capture, text=True, check=False)


def _checked(done: subprocess.CompletedProcess[str], what: str) -> str:
    if done.returncode != 0:
        raise RemoteError(f"{what} failed ({done.returncode}): {(done.stderr or done.stdout).strip()}")
    return done.stdout


def remote_of(root: Path, name: str | None) -> Remote:
    """The remote ``name``, else the default one, from ``dvc config --list``."""
    listed = _checked(_dvc(root, "config", "--list"), "dvc config --list")
    config: dict[str, str] = {}
    for line in listed.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            config[key.strip()] = value.strip()
    remotes: dict[str, dict[str, str]] = {}
    for key, value in config.items():
        if key.startswith("remote."):
            remote, _, option = key.removeprefix("remote.").rpartition(".")
            remotes.setdefault(remote, {})[option] = value
    chosen = name or config.get("core.remote")
    if not chosen:
        raise RemoteError(
            "no remote to pull from: name one (make pull REMOTE=<name>) or set a default (dvc remote default <name>)"
        )
    if chosen not in remotes or "url" not in remotes[chosen]:
        raise RemoteError(f"no remote {chosen!r} in the DVC config; known: {sorted(remotes)}")
    options = remotes[chosen]
    return Remote(chosen, options["url"], options.get("verify", "false").lower() == "true")


def object_path(md5: str) -> str:
    """Where DVC 3 keeps the object of ``md5`` in a cache or a remote (its documented layout)."""
    return f"files/md5/{md5[:2]}/{md5[2:]}"


def recorded_md5(root: Path, path: str) -> tuple[str | None, str]:
    """The md5 recorded for ``path`` and where: ``dvc.lock`` for a stage's file output, else
    what ``dvc ls`` reads from the project (a ``.dvc`` file, a directory's manifest)."""
    lock_file = root / LOCK
    if lock_file.exists():
        lock = yaml.safe_load(lock_file.read_text(encoding="utf-8")) or {}
        for stage in (lock.get("stages") or {}).values():
            for out in stage.get("outs") or ():
                if out.get("path") == path and out.get("md5"):
                    return str(out["md5"]), LOCK
    done = _dvc(root, "ls", ".", path, "--json", "--show-hash")
    if done.returncode == 0:
        entries = json.loads(done.stdout or "[]")
        if len(entries) == 1 and entries[0].get("md5"):
            return str(entries[0]["md5"]), "the project's records"
    return None, "the project's records"


def _file_md5(path: Path) -> str:
    digest = hashlib.md5()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _workspace_state(root: Path, path: str, md5: str | None) -> str:
    here = root / path
    if not here.is_file():
        return "no copy in the workspace" if not here.exists() else "the workspace copy is left as it was"
    if md5 is not None and _file_md5(here) == md5:
        return "the workspace copy matches it and is kept"
    return "the workspace copy (another version) is left as it was"


def describe_damaged(root: Path, remote: Remote, paths: list[str]) -> str:
    """One line: each damaged file, its recorded md5, its object in the remote, what the
    workspace holds, and what to do."""
    parts = []
    for path in paths:
        md5, source = recorded_md5(root, path)
        state = _workspace_state(root, path, md5)
        parts.append(
            f"{path} (md5 {md5} in {source}; remote object {object_path(md5)}; {state})" if md5 else f"{path} ({state})"
        )
    one = len(paths) == 1
    files = "a damaged copy of " if one else f"damaged copies of {len(paths)} files: "
    return (
        f"{remote} holds {files}{'; '.join(parts)}: the bytes there do not hash to {'the' if one else 'their'} md5, "
        f"so DVC dropped the download{'' if one else 's'} (a plain dvc pull calls such a file missing); nothing was "
        f"checked out. Delete the damaged object{'' if one else 's'} from the remote and push a good copy "
        "(docs/how-to/scale.md)"
    )


def cloud_status(root: Path, remote: Remote, targets: list[str]) -> dict[str, str]:
    """``dvc status --cloud --json``: each tracked file that differs between the local cache
    and the remote, with DVC's word for how ("deleted": in the remote only; "missing": in
    neither; "new": in the cache only)."""
    done = _dvc(root, "status", "--cloud", "--remote", remote.name, "--json", *targets)
    out = _checked(done, f"dvc status --cloud --remote {remote.name}")
    found = json.loads(out or "{}")
    return {str(path): str(state) for path, state in found.items()} if isinstance(found, dict) else {}


def pull(root: Path, remote_name: str | None, targets: list[str], run_cache: bool) -> int:
    """Fetch, check, check out (module docstring); raises :class:`RemoteError` on a remote
    without ``verify`` and on a damaged or missing object."""
    remote = remote_of(root, remote_name)
    if not remote.verify:
        raise RemoteError(
            f"{remote} does not check what it downloads (verify is off), so a damaged object there would "
            f"become this workspace's data unseen; turn it on: dvc remote modify {remote.name} verify true"
        )
    fetch = ["fetch", "--remote", remote.name, *(["--run-cache"] if run_cache else []), *targets]
    if _dvc(root, *fetch, capture=False).returncode != 0:
        raise RemoteError(f"dvc fetch from {remote} failed (its error is above); nothing was checked out")
    status = cloud_status(root, remote, targets)
    damaged = sorted(path for path, state in status.items() if state == "deleted")
    if damaged:
        raise RemoteError(describe_damaged(root, remote, damaged))
    missing = sorted(path for path, state in status.items() if state == "missing")
    if missing:
        raise RemoteError(
            f"{remote} lacks {', '.join(missing)}, and so does the local cache (DVC deletes an object it finds "
            "damaged in a local-folder remote, so it may have been damaged there); nothing was checked out. "
            "dvc push a good copy from a workspace that has one"
        )
    return _dvc(root, "checkout", *targets, capture=False).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hallulab.tooling.remote_pull",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("targets", nargs="*", metavar="TARGET", help="stages or files, as dvc pull takes them")
    parser.add_argument("-r", "--remote", default=None, help="the remote to pull from (default: DVC's default)")
    parser.add_argument("--run-cache", action="store_true", help="fetch the remote's run-cache too")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the workspace (default: the current folder)")
    args = parser.parse_args(argv)
    try:
        return pull(args.root, args.remote, list(args.targets), args.run_cache)
    except RemoteError as error:
        if os.environ.get("HALLULAB_DEBUG"):
            raise
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
