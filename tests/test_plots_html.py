from __future__ import annotations

import re
from pathlib import Path

import pytest

from hallulab.plots_html import render
from tests.workspace import copy_workspace, dvc

pytestmark = pytest.mark.slow


def test_offline_plots_page_loads_vega_from_local_copies(tmp_path: Path) -> None:
    root = copy_workspace(tmp_path / "ws")
    dvc(root, "repro")
    import os

    cwd = os.getcwd()
    os.chdir(root)
    try:
        page = render(root / "dvc_plots", [])
    finally:
        os.chdir(cwd)
    html = page.read_text()
    sources = re.findall(r'<script src="([^"]+)"', html)
    assert sources == ["vendor/vega.min.js", "vendor/vega-lite.min.js", "vendor/vega-embed.min.js"]
    assert "http" not in "".join(sources)
    assert all((page.parent / s).stat().st_size > 10_000 for s in sources)
    # NonFact, NonFact*, Factual PR curves of the six evaluated methods + three N-curves (Figure 7/8)
    assert html.count("vegaEmbed(") == 6 * 3 + 3
    assert "metrics_toy_n_curve_selfcheck_bertscore_csv" in html
