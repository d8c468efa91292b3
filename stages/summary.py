"""DVC stage `summary`: one table of every method's headline metrics (100 columns wide).

Writes metrics/<dataset>/summary.md and summary.csv (:mod:`hallulab.evaluation.summary`) and
prints the table; `make run` prints it again at the end.
"""

from __future__ import annotations

import argparse
from collections import defaultdict

from hallulab.config import load_params
from hallulab.evaluation.summary import summarise
from hallulab.io import atomic_open
from hallulab.pipeline import paths, registry
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.runner import run_stage


def model_notes(view: ParamsView) -> list[str]:
    """Which models made the numbers, from the params the summary stage declares."""
    roles: dict[str, list[str]] = defaultdict(list)
    for role, entry in sorted(view.get("llms").items()):
        roles[str(entry)].append(role)
    llms = "; ".join(f"{name} ({', '.join(r)})" for name, r in roles.items())
    profile = view.get("profile")
    return [
        f"Profile: {profile.get('name')} ({profile.get('description', '')}).",
        f"LLMs by role: {llms}.",
        f"NLI model: {view.get('nli.name')}; BERTScore encoder: {view.get('bertscore.name')}.",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--params", default="params.yaml")
    args = parser.parse_args()
    view = ParamsView(load_params(args.params), ("profile", "llms", "nli.name", "bertscore.name"), "summary")
    specs = list(registry.methods().values())
    text, frame = summarise(specs, args.dataset, model_notes(view))
    with atomic_open(paths.summary(args.dataset, "md")) as handle:
        handle.write(text + "\n")
    with atomic_open(paths.summary(args.dataset, "csv")) as handle:
        frame.to_csv(handle, index=False, float_format="%.4f")
    print(text)


if __name__ == "__main__":
    run_stage("summary", main)
