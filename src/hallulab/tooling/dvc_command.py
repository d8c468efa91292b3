"""The ``dvc`` command the tooling runs: the one installed beside the running interpreter (the
project's environment), else whichever ``dvc`` the PATH finds."""

from __future__ import annotations

import sys
from pathlib import Path


def dvc_executable() -> str:
    """``dvc`` beside ``sys.executable`` when it is there, else the bare name."""
    beside = Path(sys.executable).with_name("dvc")
    return str(beside) if beside.exists() else "dvc"
