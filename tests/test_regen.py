"""``make regen`` writes what the committed checkout holds: in a copy of the checkout, every
generator it runs (the method defaults list, params.yaml, dvc.yaml and its code manifests, the
toy gate baselines, the rendered tables) leaves every file as committed. A contributor who adds
a method and forgets the command fails here, and the narrower drift tests say which file."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.workspace import BIN, HANG_GUARD_S, REPO, copy_workspace, environment, git


def test_make_regen_leaves_the_checkout_as_committed(tmp_path: Path) -> None:
    root = copy_workspace(tmp_path / "checkout")
    env = {**environment(), "PYTHONPATH": str(root / "src")}  # the copy's package, not the installed one
    done = subprocess.run(
        # -o: the installed environment counts as up to date, whatever the copy's file times say
        # (make would otherwise reinstall the package, editable, from the copy)
        ["make", "-o", str(BIN.parent / ".hallulab-installed"), "regen", f"VENV={BIN.parent}"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    installed = subprocess.run(
        [str(BIN / "python"), "-c", "import hallulab; print(hallulab.__file__)"],
        cwd=REPO.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    assert installed.stdout.startswith(str(REPO / "src")), f"the installed package moved: {installed.stdout}"
    changed = git(root, "status", "--porcelain")
    assert not changed.strip(), f"make regen changed committed files:\n{changed}"
