"""Why a metric or an interval has no value: the reasons written beside every null.

The evaluation is total: for any subset of units (empty, one class, one record, tied or
non-finite scores) every metric is a number or NaN, and every NaN carries one of these
reasons, which the evaluation counts in ``.info.json``. A metric is never 0 because it
could not be computed, and one undefined metric never stops the others from being written.

Point estimates:

* :data:`NO_UNITS` -- the task (or level) keeps no unit of this variant: e.g. NonFact* on
  records whose mean label is >= 0.99 only, or an LLM variant scored on records the data set
  does not label.
* :data:`ONE_CLASS` -- every kept unit is positive, or every one is negative: a ranking
  metric (AUC-PR, ROC-AUC, average precision, PRR) compares the two classes.
* :data:`CONSTANT` -- a correlation where one side has no spread (fewer than two units, or
  one value repeated).
* :data:`NO_THRESHOLD` -- a decision metric (accuracy, F1) of a method that chose no
  threshold without test labels.
* :data:`NO_POSITIVES` -- F1 with neither a positive label nor a positive decision.

Bootstrap intervals (a percentile bootstrap over records):

* the point estimate's reason, when the full data already leaves the metric undefined;
* :data:`ONE_RECORD` -- all units come from one record: every resample is that record, so
  the spread of the resamples says nothing about the uncertainty;
* :data:`NO_DEFINED_RESAMPLE` -- the metric is undefined in every resample (e.g. each
  resample drops every positive).

Resamples in which a metric is undefined are left out of its interval, and their number is
reported beside it.
"""

from __future__ import annotations

import numpy as np

NO_UNITS = "no_units"
ONE_CLASS = "one_class"
CONSTANT = "constant_values"
NO_THRESHOLD = "no_threshold"
NO_POSITIVES = "no_positive_label_or_decision"
ONE_RECORD = "one_record"
NO_DEFINED_RESAMPLE = "no_defined_resample"

POINT_REASONS = (NO_UNITS, ONE_CLASS, CONSTANT, NO_THRESHOLD, NO_POSITIVES)
#: each reason in a few words, for pages and tables a person reads
REASON_TEXT = {
    NO_UNITS: "no unit to evaluate",
    ONE_CLASS: "one class only: every unit has the same label",
    CONSTANT: "no spread: constant values",
    NO_THRESHOLD: "no decision threshold",
    NO_POSITIVES: "no positive label or decision",
}
INTERVAL_REASONS = (*POINT_REASONS, ONE_RECORD, NO_DEFINED_RESAMPLE)
REASON_TEXT |= {ONE_RECORD: "all units from one record", NO_DEFINED_RESAMPLE: "undefined in every resample"}


def ranking(positive: np.ndarray) -> str | None:
    """Why a metric that ranks positives against negatives is undefined (None: it is defined)."""
    if positive.size == 0:
        return NO_UNITS
    if bool(positive.all()) or not bool(positive.any()):
        return ONE_CLASS
    return None


def has_spread(values: np.ndarray) -> bool:
    """At least two distinct values: exact comparison, so no rounding residue counts as spread."""
    return values.size >= 2 and bool(np.max(values) > np.min(values))


def correlation(x: np.ndarray, y: np.ndarray) -> str | None:
    """Why a correlation of ``x`` and ``y`` is undefined (None: it is defined)."""
    if x.size == 0:
        return NO_UNITS
    if not (has_spread(x) and has_spread(y)):
        return CONSTANT
    return None


def f1(positive: np.ndarray, decided: np.ndarray) -> str | None:
    """Why F1 is undefined: no unit, or neither a positive label nor a positive decision."""
    if positive.size == 0:
        return NO_UNITS
    if not bool(positive.any()) and not bool(decided.any()):
        return NO_POSITIVES
    return None


def interval(point_reason: str | None, clusters: int, defined_resamples: int) -> str | None:
    """Why a bootstrap interval is null (None: it is a number)."""
    if point_reason is not None:
        return point_reason
    if clusters < 2:
        return ONE_RECORD
    if defined_resamples == 0:
        return NO_DEFINED_RESAMPLE
    return None
