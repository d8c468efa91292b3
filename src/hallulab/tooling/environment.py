"""The environment a run ran in, named by the lock it was installed from.

``make install`` installs every package but torch from ``requirements.lock`` (and the reference
implementations from ``requirements-reference.lock``): exact versions with sha256 hashes,
written by ``make lock``. A published result records :class:`EnvironmentRef`: the digest of
those lock files, whether the packages installed in the running interpreter are the locked
versions (a package pinned there and missing or at another version is a mismatch), and the
torch and Python versions, which the lock leaves to the install step. Packages the lock does not
name (the optional llama.cpp server and its web framework, anything a user added) are not
compared: the same lock digest and ``matches_lock`` mean the same versions of every locked
package, which is everything the pipeline imports.
"""

from __future__ import annotations

import hashlib
import platform
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from hallulab.core.config import REPO_ROOT

LOCK_FILES = ("requirements.lock", "requirements-reference.lock")
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def normalise(name: str) -> str:
    """A distribution name as PEP 503 compares them (case, ``-``, ``_`` and ``.`` folded)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_pins(lines: Iterable[str]) -> dict[str, str]:
    """``name -> version`` of every ``name==version`` requirement line of a lock file (hash
    continuation lines and comments carry no pin)."""
    pins: dict[str, str] = {}
    for line in lines:
        match = _PIN.match(line)
        if match:
            pins[normalise(match[1])] = match[2]
    return pins


def _installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def installed_mismatches(pins: dict[str, str]) -> list[str]:
    """Each locked package that is missing or at another version in the running interpreter."""
    found = []
    for name, version in sorted(pins.items()):
        installed = _installed_version(name)
        if installed != version:
            found.append(f"{name}: locked {version}, installed {installed or 'nothing'}")
    return found


@dataclass(frozen=True)
class EnvironmentRef:
    """What names the environment of a run (see the module docstring)."""

    lock_sha256: str  # of the lock files, concatenated in LOCK_FILES order; "" without a lock
    matches_lock: bool
    mismatches: list[str] = field(default_factory=list)
    torch: str = ""
    python: str = ""


def current(root: Path = REPO_ROOT) -> EnvironmentRef:
    """The running interpreter's environment against the checkout's lock files."""
    files = [root / name for name in LOCK_FILES]
    python = platform.python_version()
    torch = _installed_version("torch") or ""
    if not all(path.is_file() for path in files):
        return EnvironmentRef(
            "", False, ["no lock file: not run from a checkout installed by `make install`"], torch, python
        )
    digest = hashlib.sha256()
    pins: dict[str, str] = {}
    for path in files:
        text = path.read_bytes()
        digest.update(text)
        for name, version in locked_pins(text.decode("utf-8").splitlines()).items():
            if pins.setdefault(name, version) != version:  # the second lock would silently win
                wrong_pin = f"{name}: pinned {pins[name]} and {version} in {' and '.join(LOCK_FILES)}"
                return EnvironmentRef(digest.hexdigest(), False, [wrong_pin], torch, python)
    wrong = installed_mismatches(pins)
    return EnvironmentRef(digest.hexdigest(), not wrong, wrong, torch, python)
