"""Where ``make install`` takes torch from, so that the installed torch imports on any machine.

The lock files leave torch out: it is installed first, as the CPU build, whose dependencies
(all pure Python) are pinned in ``requirements.lock``. PyPI's own Linux build of torch is the
CUDA one, which needs NVIDIA's libraries (packages of its own): installed without them, its
import fails (``ImportError: libcudnn.so.9``). So the source is chosen, in this order:

1. ``configured``: a wheel of torch at this version for this interpreter that pip's own
   configuration offers (``find-links``, ``index-url``, ``extra-index-url``, from pip's files
   or ``PIP_*`` variables: a local wheel folder or a mirror), when it is the CPU build (a
   ``+cpu`` version, or a local wheel whose metadata requires no GPU package): installed
   without dependencies.
2. ``pytorch-cpu``: the CPU build from PyTorch's CPU wheel index
   (https://download.pytorch.org/whl/cpu) when that index can be read and offers it:
   installed without dependencies.
3. ``default``: ``torch==<version>`` as pip's configuration resolves it (PyPI's build on a
   stock machine), installed *with* its own dependencies, so that it imports whichever build
   it is.

This file runs with the venv's bare interpreter before hallulab is installed (the Makefile
calls it by its path), so it imports nothing but the standard library::

    python src/hallulab/tooling/torch_source.py --version 2.13.0            # print the choice
    python src/hallulab/tooling/torch_source.py --version 2.13.0 --install  # and run it
"""

from __future__ import annotations

import argparse
import ast
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: PyTorch's index of CPU-only wheels
PYTORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
#: pip's default index: its Linux torch is the CUDA build, never taken as ``configured``
PYPI_SIMPLE = "https://pypi.org/simple"
#: seconds before an index that does not answer counts as unreachable
PROBE_TIMEOUT_S = 20.0

#: reads a URL or a local path: the page's text (a folder: its file names, one a line), or
#: None when it cannot be read
Fetch = Callable[[str], str | None]


@dataclass(frozen=True)
class TorchSource:
    """The chosen source: what pip installs, from where, and whether with dependencies."""

    kind: str  #: ``configured``, ``pytorch-cpu`` or ``default``
    target: str  #: a requirement (``torch==2.13.0+cpu``) or a local wheel's path
    index_url: str | None  #: an index that replaces pip's configured one, or None
    with_dependencies: bool
    why: str  #: one line for people

    def pip_install(self) -> list[str]:
        """The arguments of ``python -m pip`` that install it."""
        args = ["install", self.target]
        if self.index_url:
            args += ["--index-url", self.index_url]
        return args if self.with_dependencies else [*args, "--no-deps"]


@dataclass(frozen=True)
class PipSources:
    """The wheel sources pip's configuration names (pip's defaults left out)."""

    find_links: tuple[str, ...] = ()
    indexes: tuple[str, ...] = ()


def pip_sources(python: str = sys.executable) -> PipSources:
    """``find-links``, ``index-url`` and ``extra-index-url`` as ``python -m pip config list``
    reports them (pip's files, ``PIP_CONFIG_FILE``, ``PIP_*`` variables), in every section."""
    done = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False)
    return parse_pip_config(done.stdout if done.returncode == 0 else "")


def parse_pip_config(listing: str) -> PipSources:
    """The sources in ``pip config list``'s lines (``global.find-links='/opt/wheels'``)."""
    find_links: list[str] = []
    indexes: list[str] = []
    for line in listing.splitlines():
        key, _, value = line.partition("=")
        option = key.rpartition(".")[2].strip()
        try:
            text = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            text = value.strip()
        entries = str(text).split()
        if option == "find-links":
            find_links += [e for e in entries if e not in find_links]
        elif option in ("index-url", "extra-index-url"):
            indexes += [e for e in entries if e.rstrip("/") != PYPI_SIMPLE and e not in indexes]
    return PipSources(tuple(find_links), tuple(indexes))


def _local_path(location: str) -> Path | None:
    if location.startswith("file:"):
        return Path(urllib.request.url2pathname(urllib.parse.urlparse(location).path))
    if "://" in location:
        return None
    return Path(location).expanduser()


def read_location(location: str) -> str | None:
    """The text of a page (an http(s) URL, a local file), or a folder's file names (a local
    folder holding no ``index.html``); None when it cannot be read."""
    path = _local_path(location)
    if path is not None:
        index = path / "index.html"
        try:
            if path.is_dir() and not index.is_file():
                return "\n".join(entry.name for entry in path.iterdir())
            if path.is_dir():
                return index.read_text(errors="replace")
            return path.read_text(errors="replace") if path.is_file() else None
        except OSError:
            return None
    try:
        with urllib.request.urlopen(location, timeout=PROBE_TIMEOUT_S) as response:
            return response.read().decode("utf-8", errors="replace")
    except (OSError, ValueError):  # URLError, a timeout, a refused connection, a bad URL
        return None


def _join(base: str, name: str) -> str:
    path = _local_path(base)
    if path is not None:
        return str(path / name)
    return base.rstrip("/") + "/" + name


def wheel_names(page: str) -> list[str]:
    """The torch wheel file names in a page or a folder listing (links, or bare names)."""
    names = re.findall(r"torch-[^\s\"'<>#/]+?\.whl", urllib.parse.unquote(page))
    return list(dict.fromkeys(names))


def _machines() -> set[str]:
    machine = platform.machine().lower()
    aliases = {"amd64": "x86_64", "x86_64": "amd64", "arm64": "aarch64", "aarch64": "arm64"}
    return {machine, aliases.get(machine, machine)}


def fits(name: str, version: str) -> bool:
    """Whether the wheel ``name`` is torch ``version`` (any local label, ``+cpu``) for this
    interpreter: its CPython tag, its operating system and its machine."""
    parts = name[: -len(".whl")].split("-")
    if len(parts) < 5 or parts[0] != "torch" or parts[1].split("+")[0] != version:
        return False
    major, minor = sys.version_info[:2]
    if not {f"cp{major}{minor}", f"py{major}"} & set(parts[-3].split(".")):
        return False
    platform_tag = parts[-1].lower()
    if platform_tag == "any":
        return True
    system = {"linux": "linux", "darwin": "macosx", "win32": "win"}.get(sys.platform, sys.platform)
    return system in platform_tag and any(machine in platform_tag for machine in _machines())


def is_cpu_build(wheel: Path) -> bool:
    """Whether a local torch wheel is a CPU build: its metadata requires no GPU package (NVIDIA's
    libraries, the CUDA toolkit, triton)."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            text = archive.read(metadata).decode("utf-8", errors="replace")
    except (OSError, zipfile.BadZipFile, StopIteration):
        return False
    gpu = r"^Requires-Dist:\s*(nvidia|cuda|triton|pytorch-triton)"
    return not re.search(gpu, text, flags=re.MULTILINE | re.IGNORECASE)


def configured_cpu_wheel(version: str, sources: PipSources, fetch: Fetch) -> TorchSource | None:
    """The CPU build of torch ``version`` that pip's configured sources offer, or None."""
    pages = [(link, link) for link in sources.find_links]
    pages += [(index, _join(index, "torch/")) for index in sources.indexes]
    for source, location in pages:
        page = fetch(location)
        if page is None:
            continue
        for name in wheel_names(page):
            if not fits(name, version):
                continue
            folder = _local_path(location)
            wheel = folder / name if folder is not None and (folder / name).is_file() else None
            if "+cpu" in name.split("-")[1]:
                target = str(wheel) if wheel else f"torch=={name.split('-')[1]}"
                why = f"pip's configuration offers the CPU build ({name} in {source})"
                return TorchSource("configured", target, None, False, why)
            if wheel is not None and is_cpu_build(wheel):
                why = f"pip's configuration offers a CPU build ({name} in {source}: it requires no GPU package)"
                return TorchSource("configured", str(wheel), None, False, why)
    return None


def choose(
    version: str,
    sources: PipSources,
    fetch: Fetch = read_location,
    cpu_index: str = PYTORCH_CPU_INDEX,
) -> TorchSource:
    """The source of torch ``version``: configured, else PyTorch's CPU index, else the default
    build with its dependencies (the module's docstring)."""
    configured = configured_cpu_wheel(version, sources, fetch)
    if configured is not None:
        return configured
    page = fetch(_join(cpu_index, "torch/"))
    offered = [n for n in wheel_names(page or "") if fits(n, version) and "+cpu" in n.split("-")[1]]
    if offered:
        plain = min(offered, key=len)  # 2.13.0+cpu before 2.13.0+cpu.cxx11.abi
        return TorchSource(
            "pytorch-cpu",
            f"torch=={plain.split('-')[1]}",
            cpu_index,
            False,
            f"the CPU build from PyTorch's CPU index ({cpu_index})",
        )
    why = "unreachable" if page is None else f"offers no CPU build of torch {version} for this interpreter"
    return TorchSource(
        "default",
        f"torch=={version}",
        None,
        True,
        f"pip's default build with its own dependencies (PyTorch's CPU index {cpu_index}: {why})",
    )


def install(source: TorchSource, python: str, uv: str | None = None) -> None:
    """Install ``source`` into ``python``'s environment, each command printed before it runs.
    Without dependencies and with ``uv`` given, pip fetches the wheel (its configuration
    applies) and uv unpacks it."""
    if source.with_dependencies or not uv:
        _run([python, "-m", "pip", *source.pip_install(), "-q"])
        return
    with tempfile.TemporaryDirectory(prefix="torch-wheel-") as folder:
        wheel = Path(source.target)
        if not wheel.is_file():
            download = ["download", source.target, "--no-deps", "-q", "-d", folder]
            _run([python, "-m", "pip", *download, *(["--index-url", source.index_url] if source.index_url else [])])
            wheel = next(Path(folder).glob("torch-*.whl"))
        _run([uv, "pip", "install", "-q", "--python", python, "--compile-bytecode", "--no-deps", str(wheel)])


def _run(command: list[str]) -> None:
    print("+ " + shlex.join(command), flush=True)
    subprocess.run(command, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", required=True, help="torch's version, e.g. 2.13.0")
    parser.add_argument("--cpu-index", default=PYTORCH_CPU_INDEX, help=f"default: {PYTORCH_CPU_INDEX}")
    parser.add_argument("--python", default=sys.executable, help="the environment's interpreter")
    parser.add_argument("--uv", help="uv's executable, which then unpacks a wheel installed without dependencies")
    parser.add_argument("--install", action="store_true", help="install it (else print the choice only)")
    args = parser.parse_args(argv)
    source = choose(args.version, pip_sources(args.python), cpu_index=args.cpu_index)
    print(f"torch: {source.kind}: {source.why}")
    print("  python -m pip " + shlex.join(source.pip_install()), flush=True)
    if args.install:
        install(source, args.python, args.uv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
