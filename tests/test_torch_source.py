"""Where `make install` takes torch from (hallulab.tooling.torch_source): the CPU build pip's
configuration offers, else PyTorch's CPU index, else the default build with its dependencies, so
the installed torch imports on a stock machine too. Nothing is downloaded: the indexes are local
folders, an unreachable one a path that does not exist."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from hallulab.tooling import torch_source
from hallulab.tooling.torch_source import PipSources, TorchSource, choose, parse_pip_config, read_location
from tests.workspace import BIN, REPO

VERSION = "2.13.0"
SCRIPT = REPO / "src" / "hallulab" / "tooling" / "torch_source.py"


def _wheel_name(label: str = "", version: str = VERSION, python: str = "") -> str:
    """A torch wheel's file name for this interpreter and machine."""
    tag = python or f"cp{sys.version_info[0]}{sys.version_info[1]}"
    machine = platform.machine()
    system = {"darwin": f"macosx_11_0_{machine}", "win32": f"win_{machine.lower()}"}
    return f"torch-{version}{label}-{tag}-{tag}-{system.get(sys.platform, f'manylinux_2_28_{machine}')}.whl"


def _wheel(folder: Path, name: str, requires: tuple[str, ...] = ()) -> Path:
    """A stand-in wheel: only its name and its METADATA are read."""
    folder.mkdir(parents=True, exist_ok=True)
    metadata = "Metadata-Version: 2.1\nName: torch\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(folder / name, "w") as archive:
        archive.writestr(f"torch-{VERSION}.dist-info/METADATA", metadata)
    return folder / name


def _cpu_index(root: Path) -> Path:
    """A simple index (PyTorch's CPU index's layout) offering torch's CPU build, URL-quoted."""
    (root / "torch").mkdir(parents=True)
    name = _wheel_name("%2Bcpu")
    (root / "torch" / "index.html").write_text(f'<a href="/whl/cpu/{name}#sha256=00">{name}</a>\n')
    return root


def _no_fetch(url: str) -> str | None:
    return None if "download.pytorch.org" in url else read_location(url)


def _reachable(index: Path) -> torch_source.Fetch:
    def fetch(url: str) -> str | None:
        return read_location(url.replace(torch_source.PYTORCH_CPU_INDEX, str(index)))

    return fetch


def test_a_configured_cpu_wheel_goes_in_without_dependencies(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "wheels", _wheel_name("+cpu"))
    _wheel(tmp_path / "wheels", _wheel_name("+cpu", python="cp39"))
    source = choose(VERSION, PipSources(find_links=(str(tmp_path / "wheels"),)), fetch=_no_fetch)
    assert source == TorchSource("configured", str(wheel), None, False, source.why)
    assert source.pip_install() == ["install", str(wheel), "--no-deps"]


def test_a_configured_index_offering_the_cpu_build_is_asked_for_it(tmp_path: Path) -> None:
    index = _cpu_index(tmp_path / "simple")
    source = choose(VERSION, PipSources(indexes=(index.as_uri(),)), fetch=_no_fetch)
    assert source.kind == "configured" and source.target == f"torch=={VERSION}+cpu" and not source.with_dependencies


@pytest.mark.parametrize(
    "requirement",
    ['nvidia-cudnn-cu13==9.20.0.48; platform_system == "Linux"', "cuda-toolkit[cublas]==13.0.3"],
)
def test_a_configured_cuda_wheel_is_not_taken_without_its_dependencies(tmp_path: Path, requirement: str) -> None:
    """PyPI's Linux build (it requires NVIDIA's packages) in a wheel folder: not a CPU build, so
    PyTorch's CPU index where it answers, else the default build with its dependencies."""
    _wheel(tmp_path / "w", _wheel_name(), ("filelock", requirement))
    sources = PipSources(find_links=(str(tmp_path / "w"),))
    cpu = choose(VERSION, sources, fetch=_reachable(_cpu_index(tmp_path / "cpu")))
    assert cpu.kind == "pytorch-cpu" and cpu.target == f"torch=={VERSION}+cpu" and not cpu.with_dependencies
    assert cpu.pip_install() == [
        "install",
        f"torch=={VERSION}+cpu",
        "--index-url",
        torch_source.PYTORCH_CPU_INDEX,
        "--no-deps",
    ]
    default = choose(VERSION, sources, fetch=_no_fetch)
    assert default.kind == "default" and default.with_dependencies and "unreachable" in default.why
    assert default.pip_install() == ["install", f"torch=={VERSION}"]


def test_a_configured_wheel_without_nvidia_requirements_is_a_cpu_build(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "w", _wheel_name(), ("filelock", "sympy>=1.13.3"))
    source = choose(VERSION, PipSources(find_links=(str(tmp_path / "w"),)), fetch=_no_fetch)
    assert source.kind == "configured" and source.target == str(wheel) and not source.with_dependencies


def test_another_version_or_interpreter_is_not_offered(tmp_path: Path) -> None:
    _wheel(tmp_path / "w", _wheel_name("+cpu", version="2.14.1"))
    _wheel(tmp_path / "w", _wheel_name("+cpu", python="cp39"))
    assert choose(VERSION, PipSources(find_links=(str(tmp_path / "w"),)), fetch=_no_fetch).kind == "default"


def test_pip_config_lists_are_read_in_every_section() -> None:
    listing = (
        "global.constraint='/etc/xdg/pip/constraints.txt'\n"
        "global.extra-index-url='file:///opt/pypi/simple file:///opt/more/simple'\n"
        "global.find-links='/opt/wheels'\n"
        ":env:.find-links='/opt/wheels'\n"
        "install.index-url='https://pypi.org/simple'\n"
    )
    assert parse_pip_config(listing) == PipSources(
        find_links=("/opt/wheels",), indexes=("file:///opt/pypi/simple", "file:///opt/more/simple")
    )


def test_install_runs_the_chosen_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    ran: list[list[str]] = []
    monkeypatch.setattr(torch_source, "_run", ran.append)
    torch_source.install(TorchSource("default", f"torch=={VERSION}", None, True, ""), "py", uv="uv")
    wheel = _wheel(tmp_path, _wheel_name("+cpu"))
    torch_source.install(TorchSource("configured", str(wheel), None, False, ""), "py", uv="uv")
    assert ran[0] == ["py", "-m", "pip", "install", f"torch=={VERSION}", "-q"]
    assert ran[1][:3] == ["uv", "pip", "install"] and ran[1][-2:] == ["--no-deps", str(wheel)]


def _decide(tmp_path: Path, cpu_index: str, config: str = os.devnull) -> str:
    """The decision step as `make install` runs it (without --install), pip configured by
    ``config`` only (no PIP_* variable of this shell)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = config
    done = subprocess.run(
        [str(BIN / "python"), str(SCRIPT), "--version", VERSION, "--cpu-index", cpu_index],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    )
    return done.stdout


def test_with_stock_pip_configuration_the_cpu_index_or_else_the_default_build_with_dependencies(
    tmp_path: Path,
) -> None:
    unreachable = _decide(tmp_path, (tmp_path / "nowhere").as_uri())
    assert unreachable.startswith("torch: default:")
    assert unreachable.splitlines()[-1].strip() == f"python -m pip install torch=={VERSION}"
    index = _cpu_index(tmp_path / "cpu").as_uri()
    reachable = _decide(tmp_path, index)
    assert reachable.startswith("torch: pytorch-cpu:")
    assert (
        reachable.splitlines()[-1].strip()
        == f"python -m pip install torch=={VERSION}+cpu --index-url {index} --no-deps"
    )


def test_a_pip_configuration_with_a_cpu_wheel_folder_is_used(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "wheels", _wheel_name("+cpu"))
    config = tmp_path / "pip.conf"
    config.write_text(f"[global]\nfind-links = {wheel.parent}\n")
    chosen = _decide(tmp_path, (tmp_path / "nowhere").as_uri(), str(config))
    assert chosen.startswith("torch: configured:")
    assert chosen.splitlines()[-1].strip() == f"python -m pip install {wheel} --no-deps"


def test_make_install_chooses_torch_with_the_module() -> None:
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", "install", "VENV=/nonexistent/venv"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "src/hallulab/tooling/torch_source.py --version 2.13.0" in done.stdout
    assert "--install" in done.stdout and "pip download" not in done.stdout
