"""Build the sentence-unit table (pure: passages in, table out)."""

from __future__ import annotations

import pandas as pd

from hallulab.artifacts.sentences import locate
from hallulab.pipeline.context import BuildContext


def build(ctx: BuildContext) -> pd.DataFrame:
    rows: dict[str, list[object]] = {"record_id": [], "sentence_index": [], "start": [], "end": [], "text": []}
    unlocated = 0
    for record in ctx.records:
        if record.response is None:
            continue
        for index, (sentence, span) in enumerate(
            zip(record.sentences, locate(record.response, record.sentences), strict=True)
        ):
            rows["record_id"].append(record.id)
            rows["sentence_index"].append(index)
            rows["start"].append(None if span is None else span[0])
            rows["end"].append(None if span is None else span[1])
            rows["text"].append(sentence)
            unlocated += span is None
    frame = pd.DataFrame(rows)
    for name in ("start", "end"):
        frame[name] = pd.array(frame[name], dtype="Int64")
    frame["sentence_index"] = frame["sentence_index"].astype("int64")
    if unlocated:
        ctx.log.warning("%d sentence(s) not found in their response text (span left null)", unlocated)
    return frame
