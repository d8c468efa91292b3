"""Write the report page: one self-contained HTML file (style, script and data inlined).

The page opens from the file system with no network and no server: the data is a JSON
document inside the page (:mod:`hallulab.report.payload`), drawn by a plain script
(``conf/report/report.js``) with no library.

    python -m hallulab.report --dataset toy            # -> reports/toy/index.html
    python -m hallulab.report --dataset wikibio --out /tmp/wikibio.html
    python -m hallulab.report                          # every data set the pipeline ran on
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from hallulab.core.config import CONF_DIR
from hallulab.core.io import atomic_open
from hallulab.report.declared import DeclaredUnits, declared_units
from hallulab.report.inputs import NothingToReportError, load_inputs
from hallulab.report.payload import build_payload
from hallulab.report.units import UnitCatalogue

REPORT_CONF = CONF_DIR / "report"


def default_path(dataset: str) -> Path:
    return Path("reports") / dataset / "index.html"


def embedded_json(payload: Any) -> str:
    """JSON safe inside a <script> element: no ``</`` can close it early."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")


def fill_template(name: str, payload: Any, pieces: dict[str, str]) -> str:
    """The template ``conf/report/<name>`` with the report's style, each marker of ``pieces``
    and, last (the data may hold any marker), ``payload`` as embedded JSON."""
    template = (REPORT_CONF / name).read_text(encoding="utf-8")
    pieces = {"__STYLE__": (REPORT_CONF / "report.css").read_text(encoding="utf-8"), **pieces}
    for marker, piece in pieces.items():
        template = template.replace(marker, piece)
    return template.replace("__DATA__", embedded_json(payload))


def render(payload: dict[str, Any]) -> str:
    """The page's HTML for ``payload``."""
    script = (REPORT_CONF / "report.js").read_text(encoding="utf-8")
    return fill_template("page.html", payload, {"__SCRIPT__": script, "__DATASET__": str(payload["dataset"])})


def registered_unit_declarations() -> tuple[DeclaredUnits, ...]:
    """The units the registered artifacts and methods declare, with the methods each names."""
    from hallulab.pipeline import registry

    return declared_units(registry.methods(), registry.artifacts())


def write_report(dataset: str, out: Path | None = None, root: Path = Path()) -> Path:
    """Build the page for ``dataset`` from the run's files under ``root``; returns its path."""
    from hallulab.pipeline import registry

    titles = {name: spec.title for name, spec in registry.methods().items()}
    headlines = {name: spec.benchmark_variants for name, spec in registry.methods().items()}
    inputs = load_inputs(dataset, root, titles, registered_unit_declarations(), headlines)
    catalogue = UnitCatalogue.build(inputs.records, inputs.named_units, inputs.details)
    page = render(build_payload(inputs, catalogue))
    path = out or root / default_path(dataset)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path) as handle:
        handle.write(page)
    return path


def datasets_run(root: Path = Path()) -> list[str]:
    """Data sets with generated records and unit scores under ``root``."""
    return sorted(
        found.parent.name
        for found in (root / "data" / "generated").glob("*/passages.jsonl")
        if any((root / "data" / "aggregated" / found.parent.name).glob("*.parquet"))
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default=None, help="default: every data set the pipeline ran on")
    parser.add_argument("--out", type=Path, default=None, help="default: reports/<dataset>/index.html")
    args = parser.parse_args(argv)
    datasets = [args.dataset] if args.dataset else datasets_run()
    if not datasets:
        raise SystemExit("no data set has scores yet: run the pipeline first (make run)")
    if args.out is not None and len(datasets) > 1:
        raise SystemExit("--out names one page: give --dataset too")
    for dataset in datasets:
        try:
            path = write_report(dataset, args.out)
        except NothingToReportError as error:
            raise SystemExit(str(error)) from None
        size = path.stat().st_size / 1e6
        print(f"Report: {path} ({size:.1f} MB; open it in a browser, no server needed)")
