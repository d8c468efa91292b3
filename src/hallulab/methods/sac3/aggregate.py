"""SAC3 scores from the verifier verdicts stored in the records' ``meta``."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from hallulab.core.units import ScoreTable
from hallulab.methods.skipped import Skipped, log_skipped, skip_diagnostics
from hallulab.pipeline.context import AggregateContext, Aggregated

_GUESS = re.compile(r"guess\s*:\s*(yes|no)", re.I)


def inconsistency(verdicts: Sequence[str]) -> tuple[float | None, int]:
    """Share of "Guess: No" among the parseable verdicts, and how many were unparseable."""
    parsed = [_GUESS.search(v or "") for v in verdicts]
    values = [m.group(1).lower() == "no" for m in parsed if m]
    return (float(np.mean(values)) if values else None), sum(m is None for m in parsed)


def aggregate(ctx: AggregateContext[None]) -> Aggregated:
    table = ScoreTable()
    counts: Counter[str] = Counter()
    scored: set[str] = set()  # a record either variant scored; the others are skipped
    for record in ctx.records:
        for variant, key in (("sac3_q", "perb_sc"), ("sac3_sc", "self_sc")):
            verdicts = record.meta.get(key)
            if not verdicts:
                counts[f"{variant}_records_without_verdicts"] += 1
                continue
            score, unparseable = inconsistency(verdicts)
            counts[f"{variant}_unparseable_verdicts"] += unparseable
            if score is None:
                counts[f"{variant}_records_without_verdicts"] += 1
                continue
            table.add_response(variant, record.id, score)
            scored.add(record.id)
    skipped = [Skipped(p.id, "no verdicts") for p in ctx.records if p.id not in scored]
    log_skipped(ctx.log, "SAC3", skipped)
    diagnostics = {
        **dict(counts),
        "verifier": "gpt-3.5 (the verdicts shipped with the SAC3 sets)",
        **skip_diagnostics(s.record_id for s in skipped),
    }
    return Aggregated(table.frame(), diagnostics)
