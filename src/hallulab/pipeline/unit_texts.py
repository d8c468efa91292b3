"""What a unit is, as the artifact or method that defines it declares it (read by the report page).

A unit-level score row names a unit by (record, level, index) (:mod:`hallulab.core.units`). The
records spell out some units themselves (a response's sentences, the response, the claims a data
set gives, the prompt); the others are defined by the stored file of the shared artifact or the
method that made them (an extracted claim, a knowledge-graph triple, a tagged fact) and only that
package knows the file's shape. It declares them with :class:`UnitTexts` (on
:attr:`hallulab.pipeline.spec.ArtifactSpec.units` or :attr:`hallulab.pipeline.spec.MethodSpec.units`):
the level of its units and a reader that turns its stored JSON file into :class:`DescribedUnit`
values. The report page calls the reader on the file a run wrote, and so shows each unit's text,
sentence and details without knowing any method or file by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from hallulab.core.levels import LEVELS


@dataclass(frozen=True)
class DescribedUnit:
    """One unit as the file that defines it describes it.

    ``index`` is the unit's position in its record at its level (the score rows' ``unit_index``);
    ``text`` None keeps the records' own text of the unit (a prompt described only by its
    details); ``sentence_index`` None: the file names no sentence; ``details`` are (name, value)
    pairs in the order they read best; ``unit_set`` names the set the unit belongs to when a
    declaration's units differ by variant (:attr:`UnitTexts.unit_set`), "" when they do not."""

    record_id: str
    index: int
    text: str | None = None
    sentence_index: int | None = None
    details: tuple[tuple[str, str], ...] = ()
    unit_set: str = ""


@dataclass(frozen=True)
class StoredFiles:
    """What a reader reads: the declaring package's own stored JSON file (an artifact's file, or a
    method's raw scores), where it lies (for error messages), and the artifacts named in
    :attr:`UnitTexts.reads`, by name, those the run wrote."""

    own: Mapping[str, Any]
    where: str = ""
    artifacts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


class UnitReader(Protocol):
    """Reads the units a stored file defines (every record's, in any order)."""

    def __call__(self, files: StoredFiles) -> Iterable[DescribedUnit]: ...


def one_unit_set(variant: str) -> str:
    """Every variant scores the same units: the one unnamed set."""
    return ""


@dataclass(frozen=True)
class UnitTexts:
    """A declaration of the units a stored file defines, at one level.

    ``read`` turns the file into :class:`DescribedUnit` values; ``reads``: the shared artifacts it
    reads besides the file (JSON artifacts the declaring method requires); ``unit_set``: for
    units that differ by variant, the set a variant scores (a variant's name -> a
    :attr:`DescribedUnit.unit_set`; by default every variant scores the one set)."""

    level: str
    read: UnitReader
    reads: tuple[str, ...] = ()
    unit_set: Callable[[str], str] = one_unit_set

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"unit texts at level {self.level!r}: not one of {LEVELS}")
