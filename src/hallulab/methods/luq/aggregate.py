"""LUQ, cheap step: the sentence reading over the chosen samples of the stored sentence x sample
matrix, and lm-polygraph's reading over the chosen samples' NLI pair matrix (the formulas are in
the package docstring and :mod:`.formula`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from hallulab.core.errors import StaleScoresError
from hallulab.core.units import concat
from hallulab.methods.luq.formula import VARIANT, samples_uncertainty
from hallulab.methods.luq.knobs import LUQKnobs
from hallulab.methods.sample_graph import ChosenSamples, response_scores
from hallulab.methods.sample_matrix import aggregate as sentence_rows
from hallulab.methods.sample_matrix import sample_choice_from
from hallulab.methods.sample_scores import SampleMatrices, SampleMatrixScores
from hallulab.pipeline.context import AggregateContext, Aggregated


def samples_score(record: ChosenSamples) -> float:
    """lm-polygraph's reading of one record's chosen samples."""
    try:
        return samples_uncertainty(record.pairs.entail, record.pairs.contra)
    except ValueError as error:
        raise ValueError(f"nli_pair_matrix: record {record.record_id!r}: {error}") from error


def sentence_matrix(raw: SampleMatrixScores) -> SampleMatrices:
    """The score step's sentence x sample matrices (a file without them is stale)."""
    for stored in raw.variants:
        if stored.variant == VARIANT:
            return stored
    held = [stored.variant for stored in raw.variants]
    raise StaleScoresError("", "LUQ's sentence scores", f"no {VARIANT!r} matrices, only {held}")


def aggregate(ctx: AggregateContext[SampleMatrixScores]) -> Aggregated:
    knobs = ctx.params.typed(LUQKnobs, "luq")
    selection = sample_choice_from(ctx.params)
    frames: list[pd.DataFrame] = []
    diagnostics: dict[str, Any] = {"readings": list(knobs.readings)}
    if "sentence" in knobs.readings:
        frame, found = sentence_rows(sentence_matrix(ctx.raw), selection)
        frames.append(frame)
        diagnostics["sentence"] = found
    if "response" in knobs.readings:
        over_samples = AggregateContext(ctx.dataset, ctx.records, ctx.artifacts, None, ctx.params, ctx.log)
        found_response = response_scores(over_samples, {"luq_response": samples_score}, {})
        frames.append(found_response.scores)
        diagnostics["response"] = found_response.diagnostics
    return Aggregated(concat(frames), diagnostics)
