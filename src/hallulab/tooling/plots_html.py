"""Render every DVC plot to an HTML page that works offline.

``dvc plots show`` writes a page whose scripts come from a CDN. We pass our own page
template (``conf/plots/offline.html``, no ``{scripts}`` placeholder, so DVC adds no CDN
tags) and copy the vendored Vega builds (``conf/plots/vendor``) next to the page.
Usage: ``python -m hallulab.tooling.plots_html --out dvc_plots [dvc plots show args...]``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

from hallulab.core.config import CONF_DIR
from hallulab.tooling.dvc_command import dvc_executable

TEMPLATE = CONF_DIR / "plots" / "offline.html"
VENDOR = CONF_DIR / "plots" / "vendor"
VENDORED_SCRIPTS = ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js")


def render(out_dir: Path, extra_args: list[str]) -> Path:
    """Run ``dvc plots show`` with the offline template; returns the page's path."""
    command = [dvc_executable(), "plots", "show", "--html-template", str(TEMPLATE)]
    subprocess.run([*command, "-o", str(out_dir), *extra_args], check=True)
    vendor_out = out_dir / "vendor"
    vendor_out.mkdir(parents=True, exist_ok=True)
    for name in VENDORED_SCRIPTS:
        shutil.copy2(VENDOR / name, vendor_out / name)
    page = out_dir / "index.html"
    if "cdn." in page.read_text(encoding="utf-8"):
        raise RuntimeError(f"{page} still references a CDN")
    return page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="dvc_plots")
    args, extra = parser.parse_known_args()
    print(render(Path(args.out), extra))


if __name__ == "__main__":
    main()
