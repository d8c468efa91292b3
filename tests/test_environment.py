"""The environment is exact: the lock files pin every package with hashes, `make install` installs
them, and a published result can say whether it ran in that environment."""

from __future__ import annotations

from pathlib import Path

from hallulab.core.config import REPO_ROOT
from hallulab.tooling.environment import LOCK_FILES, current, installed_mismatches, locked_pins


def _requirement_blocks(text: str) -> list[list[str]]:
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if line and not line.startswith((" ", "#")):
            blocks.append([line])
        elif line.strip().startswith("--hash=") and blocks:
            blocks[-1].append(line)
    return blocks


def test_every_locked_requirement_is_an_exact_pin_with_a_hash() -> None:
    for name in LOCK_FILES:
        blocks = _requirement_blocks((REPO_ROOT / name).read_text())
        assert blocks, name
        for block in blocks:
            assert "==" in block[0], f"{name}: {block[0]!r} is not an exact pin"
            assert any("--hash=sha256:" in line for line in block[1:]), f"{name}: {block[0]!r} has no hash"


def test_the_lock_holds_no_torch_and_no_cuda_package() -> None:
    """torch (the CPU build) is installed before the lock; a CUDA package here would mean the
    lock was resolved against the GPU build."""
    pins = locked_pins((REPO_ROOT / "requirements.lock").read_text().splitlines())
    assert "torch" not in pins
    assert not [name for name in pins if name.startswith(("nvidia-", "cuda-", "triton"))]


def test_the_installed_environment_is_the_locked_one() -> None:
    env = current()
    assert env.matches_lock, "the running environment differs from the lock:\n" + "\n".join(env.mismatches)
    assert len(env.lock_sha256) == 64
    assert env.torch.startswith("2.13.0")


def test_a_version_that_differs_from_the_lock_is_named() -> None:
    pins = locked_pins(["numpy==0.0.1 \\", "    --hash=sha256:00", "not-a-real-package-hallulab==1.0", "# pyyaml==1"])
    assert set(pins) == {"numpy", "not-a-real-package-hallulab"}
    found = installed_mismatches(pins)
    assert found[0] == "not-a-real-package-hallulab: locked 1.0, installed nothing"
    assert found[1].startswith("numpy: locked 0.0.1, installed ")


def test_a_tree_without_lock_files_says_so(tmp_path: Path) -> None:
    env = current(tmp_path)
    assert env.lock_sha256 == "" and not env.matches_lock and "no lock file" in env.mismatches[0]


def test_a_package_pinned_at_two_versions_across_the_locks_is_named(tmp_path: Path) -> None:
    (tmp_path / LOCK_FILES[0]).write_text("numpy==2.0.0 \\\n    --hash=sha256:00\n")
    (tmp_path / LOCK_FILES[1]).write_text("NumPy==1.26.4\n")
    env = current(tmp_path)
    assert not env.matches_lock
    assert env.mismatches == [f"numpy: pinned 2.0.0 and 1.26.4 in {LOCK_FILES[0]} and {LOCK_FILES[1]}"]
