"""The cheap half of :mod:`hallulab.pipeline.executor`: a method's aggregate step, run the same
way by the ``aggregate`` stage and by the API. No model layer is imported here, so the cheap
stages stay cheap (``tests/test_dvcgen.py`` checks their code manifests)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from hallulab.data.schema import Record
from hallulab.pipeline import registry
from hallulab.pipeline.context import AggregateContext, Aggregated
from hallulab.pipeline.params import ParamsView
from hallulab.pipeline.spec import MethodSpec, StoredRaw


def aggregate_method(
    spec: MethodSpec,
    dataset: str,
    records: Sequence[Record],
    artifacts: Mapping[str, Any],
    raw: StoredRaw | None,
    view: ParamsView,
    log: logging.Logger,
    members: Mapping[str, pd.DataFrame] | None = None,
) -> Aggregated:
    """A method's cheap step over what its score step stored (``raw``, read back by
    :meth:`MethodSpec.read_raw`) and, for a combining method, its members' unit scores."""
    aggregate = registry.step_function("method", spec.name, "aggregate")
    context = AggregateContext(dataset, records, artifacts, raw, view, log, members if members is not None else {})
    result: Aggregated = aggregate(context)
    return result
