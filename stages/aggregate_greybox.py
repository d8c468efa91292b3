"""DVC stage `aggregate_greybox`: token statistics -> Avg/Max(-log p), Avg/Max(H) scores."""

from __future__ import annotations

import argparse

from hallulab.data.loaders import load_jsonl_passages
from hallulab.io import read_json, write_json
from hallulab.llm.base import TokenStats
from hallulab.logs import stage_logger
from hallulab.methods.greybox import score_passages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--passages", required=True)
    parser.add_argument("--tokens", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    log = stage_logger("aggregate_greybox")

    passages = load_jsonl_passages(args.passages)
    raw = read_json(args.tokens)
    stats = {pid: [TokenStats.from_dict(t) for t in rows] for pid, rows in raw["tokens"].items()}
    scores = score_passages(passages, stats)
    payload = scores.to_dict()
    payload["diagnostics"]["llm"] = raw["llm"]
    write_json(args.out, payload, indent=None)
    log.info("%s: %s", list(scores.variants), scores.diagnostics)


if __name__ == "__main__":
    main()
