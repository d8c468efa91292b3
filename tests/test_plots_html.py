"""`make run`'s plots page works offline: Vega from local copies, one plot per method and curve."""

from __future__ import annotations

import re

import pytest

from hallulab.pipeline import registry
from tests.conftest import ToyRun

pytestmark = pytest.mark.slow


def test_offline_plots_page_loads_vega_from_local_copies(toy_run: ToyRun) -> None:
    page = toy_run.root / "dvc_plots" / "index.html"
    html = page.read_text()
    sources = re.findall(r'<script src="([^"]+)"', html)
    assert sources == ["vendor/vega.min.js", "vendor/vega-lite.min.js", "vendor/vega-embed.min.js"]
    assert "http" not in "".join(sources)
    assert all((page.parent / s).stat().st_size > 10_000 for s in sources)
    methods = registry.methods()
    curves = [name for name, spec in methods.items() if spec.sample_curve]
    knob_curves = [name for name, spec in methods.items() if spec.knob_curve]
    # one PR plot per method (faceted by task), an N-curve per sample-matrix method, a knob curve (CCP's K)
    assert html.count("vegaEmbed(") == len(methods) + len(curves) + len(knob_curves)
    assert "metrics_toy_n_curve_selfcheck_bertscore_csv" in html
