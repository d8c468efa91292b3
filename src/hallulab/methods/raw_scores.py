"""The typed contract between a method's expensive ``score`` step and its cheap ``aggregate``.

A method's score step returns the class its spec names in ``raw``: a :class:`RawScores`
dataclass, or for the sample-matrix methods :class:`hallulab.methods.sample_matrix.SampleMatrixScores`
(MQAG: its ``StoredMQAG``); the score stage refuses anything else. The stage writes its
``to_dict()`` to ``data/scores/<ds>/<method>.json``; the aggregate stage reads it back with the
same class's ``from_dict(raw, where)``, so the aggregate step reads attributes, and a field that
is missing, misspelt or unknown is a :class:`hallulab.core.errors.StaleScoresError` naming the file,
not a silent ``.get(..., {})`` default. Field order is the file's key order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeAlias, TypeVar

from hallulab.core.errors import StaleScoresError

T = TypeVar("T", bound="RawScores")

#: A value as JSON holds it: only for a field that keeps an open record as it was given (a
#: model's identity, whose keys follow its configuration), never for a shape this package fixes.
JSONValue: TypeAlias = "dict[str, JSONValue] | list[JSONValue] | str | int | float | bool | None"

#: A score step's counts, with the two keys of :func:`hallulab.methods.skipped.skip_diagnostics`
#: (``skipped_records``, ``skipped_record_ids``).
CountsAndSkipped: TypeAlias = dict[str, int | list[str]]


@dataclasses.dataclass
class RawScores:
    """Base of a method's stored raw scores (subclasses are dataclasses of JSON values)."""

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls: type[T], raw: Mapping[str, Any], where: str = "") -> T:
        fields = dataclasses.fields(cls)
        names = [f.name for f in fields]
        required = [
            f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ]
        unknown = sorted(set(raw) - set(names))
        missing = [name for name in required if name not in raw]
        if unknown or missing:
            raise StaleScoresError(where, cls.__name__, f"missing {missing}, unknown {unknown}")
        return cls(**{name: raw[name] for name in names if name in raw})
