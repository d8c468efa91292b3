"""What each scored unit *is*, for the page: its text, its label and the method's detail.

A unit-level score row names a unit by (record, level, index). The records spell out the units
of every level they hold, with the data set's labels:

==========  ===============================================================================
level       what the records give
==========  ===============================================================================
sentence    the response's sentence; its label when the data set labels sentences
claim       the claim the data set gives, with its sentence and label
response    the whole response; its label when the data set gives one
prompt      the prompt; its label when the data set gives one
==========  ===============================================================================

A unit defined by an artifact or a method (an extracted claim, a knowledge-graph triple, a
tagged fact) is described by that package's declaration (:mod:`hallulab.report.declared`): its
text and sentence take the place of the records' (a declaration without a text keeps the
records'), beside the details it reads from its file; the label is always the records'.
Beside any unit, the details its method's aggregate step wrote for it
(``data/aggregated/<dataset>/<method>.details.parquet``); the page recomputes none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import pandas as pd

from hallulab.core.units import details_by_unit
from hallulab.data.schema import Record
from hallulab.pipeline.unit_texts import DescribedUnit
from hallulab.report.inputs import NamedUnits

#: (variant, level, record, unit index) -> the unit's (name, value) details
UnitDetails = Mapping[tuple[str, str, str, int], tuple[tuple[str, str], ...]]


@dataclass(frozen=True)
class UnitView:
    """One unit as the page shows it: position, text, label (None: unlabelled) and details
    (name, value) pairs in the order they read best."""

    index: int
    sentence_index: int | None
    text: str
    label: float | None = None
    details: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class LevelUnits:
    """The units one declaration names for a method at one level: by (unit set, record, index),
    and the unit set each variant scores."""

    unit_set: Callable[[str], str]
    units: Mapping[tuple[str, str, int], DescribedUnit]

    def find(self, variant: str, record_id: str, index: int) -> DescribedUnit | None:
        return self.units.get((self.unit_set(variant), record_id, index))


@dataclass(frozen=True)
class UnitCatalogue:
    """Every unit a run defined (see the module docstring)."""

    records: Mapping[str, Record]
    #: (method, level) -> the units a declaration names for it
    described: Mapping[tuple[str, str], LevelUnits] = field(default_factory=dict)
    #: method -> its aggregate step's per-unit details
    details: Mapping[str, UnitDetails] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        records: Sequence[Record],
        named: Sequence[NamedUnits] = (),
        details: Mapping[str, pd.DataFrame] | None = None,
    ) -> UnitCatalogue:
        described: dict[tuple[str, str], LevelUnits] = {}
        for found in named:
            texts = found.declared.texts
            by_key = {(unit.unit_set, unit.record_id, unit.index): unit for unit in found.units}
            for method in found.declared.methods:
                described[(method, texts.level)] = LevelUnits(texts.unit_set, by_key)
        return cls(
            records={p.id: p for p in records},
            described=described,
            details={method: details_by_unit(frame) for method, frame in (details or {}).items() if len(frame)},
        )

    def key(self, method: str, variant: str) -> str:
        """The name of the units ``method``'s ``variant`` scores: the method's, followed by the
        unit sets the variant scores where its units differ by variant (``method:set``)."""
        sets = [level.unit_set(variant) for (owner, _), level in self.described.items() if owner == method]
        return ":".join([method, *dict.fromkeys(name for name in sets if name)])

    def unit(self, method: str, variant: str, level: str, record_id: str, index: int) -> UnitView:
        """The unit ``index`` of ``level`` in ``record_id`` as ``method``'s ``variant`` scored it,
        with the details the method wrote for it."""
        view = self._unit(method, variant, level, record_id, index)
        found = self.details.get(method, {}).get((variant, level, record_id, index))
        return replace(view, details=view.details + found) if found else view

    def _unit(self, method: str, variant: str, level: str, record_id: str, index: int) -> UnitView:
        record = self.records.get(record_id)
        if record is None:
            return UnitView(index, None, f"(record {record_id} is not among the generated records)")
        view = record_unit(record, level, index)
        declared = self.described.get((method, level))
        found = declared.find(variant, record_id, index) if declared else None
        if found is None:
            return view
        return replace(
            view,
            text=view.text if found.text is None else found.text,
            sentence_index=view.sentence_index if found.sentence_index is None else found.sentence_index,
            details=found.details,
        )


def record_unit(record: Record, level: str, index: int) -> UnitView:
    """The unit ``index`` of ``level`` as the record spells it out (see the module docstring)."""
    if level == "sentence":
        label = record.labels[index] if record.labels is not None and index < len(record.labels) else None
        text = record.sentences[index] if index < len(record.sentences) else "(no such sentence)"
        return UnitView(index, index, text, label)
    if level == "response":
        return UnitView(index, None, "the whole response", record.response_label)
    if level == "prompt":
        return UnitView(index, None, record.prompt or "(no prompt)", record.prompt_label)
    if level == "claim" and index < len(record.claims):
        given = record.claims[index]
        return UnitView(index, given.sentence_index, given.text, given.label)
    return UnitView(index, None, f"({level} {index})")
