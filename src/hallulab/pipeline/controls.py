"""What later stages read from a method's aggregate step, as a typed contract.

An aggregate step returns unit scores and free-form diagnostics for people; a few of its
outputs are read by other stages (``evaluate``, ``summary``, ``knob_curve``). They are the
explicit fields of :class:`AggregateControls`, written by the aggregate stage to a file of their
own (``data/aggregated/<dataset>/<method>.controls.json``, which ``evaluate`` and
``knob_curve`` depend on, and ``evaluate`` copies under ``controls`` into the ``.info.json``
that ``summary`` reads), and read back only through :meth:`AggregateControls.from_record`, so a
misspelt field is an error where it is written or read, never a silent default. The
diagnostics stay for people. No heavy imports: cheap stages read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class KnobPoint:
    """Where a variant sits on a knob curve (CCP's K, Figure 7): its series and knob value."""

    series: str
    knob: str
    value: float

    def to_dict(self) -> dict[str, Any]:
        return {"series": self.series, self.knob: self.value}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str) -> KnobPoint:
        others = [k for k in raw if k != "series"]
        if "series" not in raw or len(others) != 1:
            raise ValueError(f"{where}: a knob point is {{'series': ..., <knob>: value}}, got {dict(raw)!r}")
        return cls(str(raw["series"]), others[0], raw[others[0]])


#: The fields of an aggregate's record that other stages read (the rest is for people).
CONTROL_FIELDS = ("thresholds", "headline_variants", "knob_curve")


@dataclass(frozen=True)
class AggregateControls:
    """What later stages read from an aggregate step's record, typed:

    * ``thresholds``: variant -> the decision threshold the method chose itself (Self-
      Familiarity's from the basic concepts); ``evaluate`` uses it for ACC and F1;
    * ``headline_variants``: the variants the run's summary shows (None: all);
    * ``knob_curve``: variant -> its point on a knob curve (the ``knob_curve`` stage)."""

    thresholds: dict[str, float] = field(default_factory=dict)
    headline_variants: tuple[str, ...] | None = None
    knob_curve: dict[str, KnobPoint] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Only the fields a method set, so records without them stay as they were."""
        out: dict[str, Any] = {}
        if self.thresholds:
            out["thresholds"] = dict(self.thresholds)
        if self.headline_variants is not None:
            out["headline_variants"] = list(self.headline_variants)
        if self.knob_curve:
            out["knob_curve"] = {variant: point.to_dict() for variant, point in self.knob_curve.items()}
        return out

    @classmethod
    def from_record(cls, record: Mapping[str, Any], where: str) -> AggregateControls:
        """The controls of an aggregate record (``.controls.json``, or an ``.info.json``'s
        ``controls``); a control field of the wrong shape is an error naming the file."""
        thresholds = record.get("thresholds", {})
        headline = record.get("headline_variants")
        curve = record.get("knob_curve", {})
        if not isinstance(thresholds, Mapping) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in thresholds.values()
        ):
            raise ValueError(f"{where}: thresholds must map variants to numbers, got {thresholds!r}")
        if headline is not None and (not isinstance(headline, list) or not all(isinstance(h, str) for h in headline)):
            raise ValueError(f"{where}: headline_variants must be a list of variant names, got {headline!r}")
        if not isinstance(curve, Mapping):
            raise ValueError(f"{where}: knob_curve must map variants to points, got {curve!r}")
        return cls(
            thresholds={str(k): float(v) for k, v in thresholds.items()},
            headline_variants=None if headline is None else tuple(headline),
            knob_curve={str(k): KnobPoint.from_dict(v, f"{where}: knob_curve.{k}") for k, v in curve.items()},
        )
