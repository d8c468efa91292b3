"""One calibration: a detector's scores on a labelled data set made into probabilities, a
threshold chosen by a stated rule, both evaluated on units they were not fitted on.

From one benchmark cell's labelled units (:class:`hallulab.benchmark.units.CellUnits`: one
variant at one level, hallucinated class positive):

1. **Split by record**, seeded: a share of the records (``development_share``) is the
   development split, the rest held out. A record's units stay together.
2. **Fit** isotonic regression and Platt scaling (:mod:`hallulab.calibration.maps`) on every
   development unit: the stored maps.
3. **Choose the threshold on the development split only, cross-fitted**: the development
   records are cut into ``folds`` groups (scikit-learn's ``GroupKFold``); each group's units get
   probabilities from the map fitted on the other groups, so no unit's probability comes from a
   fit that saw it, and the rule runs on those: the highest F1 (``best_f1``) or the lowest
   threshold reaching ``target_precision`` (``precision``).
4. **Measure on the held-out units** (:mod:`hallulab.calibration.measure`): Brier score and ECE
   before calibration (the raw score min-max scaled over the development units, clipped to
   [0, 1]: a score is no probability, this is what reading it as one gives) and after each map,
   and precision, recall and F1 of the flag at the threshold, each with its 95% bootstrap
   interval over held-out records.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from hallulab.benchmark.statistics import Estimate
from hallulab.benchmark.units import CellUnits
from hallulab.calibration.maps import KINDS, IsotonicMap, PlattMap, fit_map
from hallulab.calibration.measure import (
    ECE_BINS,
    best_f1_threshold,
    brier,
    decision_figures,
    expected_calibration_error,
    precision_target_threshold,
    reliability_bins,
)
from hallulab.core.errors import UserFacingError
from hallulab.evaluation import bootstrap

RULES = ("best_f1", "precision")


class CalibrationError(ValueError, UserFacingError):
    """A cell that cannot be calibrated (one class in a split, too few records), or a stored
    calibration that does not fit what it is applied to."""


@dataclass(frozen=True)
class CalibrationSettings:
    """How a calibration is fitted and evaluated (stored inside every calibration file)."""

    development_share: float = 0.5
    seed: int = 0
    folds: int = 5
    kind: str = "isotonic"  #: the map that gives the probability and the flag (both are evaluated)
    rule: str = "best_f1"
    target_precision: float = 0.8  #: the ``precision`` rule's target
    bootstrap_samples: int = 1000
    ci_level: float = 0.95

    def __post_init__(self) -> None:
        if not 0.0 < self.development_share < 1.0:
            raise CalibrationError(f"development_share {self.development_share}: a share strictly between 0 and 1")
        if self.kind not in KINDS:
            raise CalibrationError(f"kind {self.kind!r} is not one of {KINDS}")
        if self.rule not in RULES:
            raise CalibrationError(f"rule {self.rule!r} is not one of {RULES}")
        if not 0.0 < self.target_precision <= 1.0:  # NaN fails too
            raise CalibrationError(f"target_precision {self.target_precision}: a precision is a number in (0, 1]")
        if self.folds < 2:
            raise CalibrationError(f"folds {self.folds}: cross-fitting needs at least 2")


@dataclass(frozen=True)
class Split:
    """The records of each side, in the units' order of first appearance."""

    development: tuple[str, ...]
    heldout: tuple[str, ...]


def split_records(records: tuple[str, ...], share: float, seed: int) -> Split:
    """A seeded random ``share`` of the distinct records (at least one, and one left) for
    development, the rest held out."""
    distinct = list(dict.fromkeys(records))
    if len(distinct) < 4:
        raise CalibrationError(f"{len(distinct)} records: a split into development and held-out needs 4 or more")
    order = np.random.default_rng(seed).permutation(len(distinct))
    count = min(max(round(share * len(distinct)), 2), len(distinct) - 2)
    chosen = {distinct[i] for i in order[:count]}
    return Split(
        tuple(r for r in distinct if r in chosen),
        tuple(r for r in distinct if r not in chosen),
    )


def _side(units: CellUnits, records: tuple[str, ...], name: str) -> CellUnits:
    keep = set(records)
    side = units.restricted_to([key for key in units.keys if key[0] in keep])
    if side.positive.all() or not side.positive.any():
        raise CalibrationError(f"{units.variant}: the {name} units hold one class only")
    return side


def cross_fitted(kind: str, units: CellUnits, folds: int) -> np.ndarray:
    """Each unit's probability from the ``kind`` map fitted on the other record groups."""
    from sklearn.model_selection import GroupKFold

    groups = np.asarray(units.records, dtype=object)
    splits = min(folds, len(set(units.records)))
    out = np.empty(len(units.scores))
    for train, test in GroupKFold(n_splits=splits).split(units.scores, units.positive, groups):
        fitted = fit_map(kind, units.scores[train], units.positive[train])
        out[test] = fitted(units.scores[test])
    return out


def _estimate(values: np.ndarray, level: float) -> Estimate:
    point = float(values[0])
    if np.isnan(point):
        return Estimate(None, None, None)
    draws = values[1:]
    low, high = bootstrap.percentile_interval(draws[~np.isnan(draws)], level)
    return Estimate(round(point, 4), round(float(low), 4), round(float(high), 4))


def _weights(records: tuple[str, ...], samples: int, seed: int) -> np.ndarray:
    """Row 0 all ones (the point estimate), then ``samples`` record resamples."""
    names, owner = np.unique(np.asarray(records, dtype=object), return_inverse=True)
    draws = bootstrap.resample_weights(len(names), samples, seed)[:, owner]
    return np.vstack([np.ones((1, len(records))), draws])


def probability_figures(
    probability: np.ndarray, units: CellUnits, settings: CalibrationSettings
) -> dict[str, Estimate]:
    """Brier score and ECE of ``probability`` on ``units``, with intervals."""
    weights = _weights(units.records, settings.bootstrap_samples, settings.seed)
    return {
        "brier": _estimate(brier(probability, units.positive, weights), settings.ci_level),
        "ece": _estimate(expected_calibration_error(probability, units.positive, weights), settings.ci_level),
    }


def flag_figures(
    probability: np.ndarray, units: CellUnits, threshold: float, settings: CalibrationSettings
) -> dict[str, Estimate]:
    """Precision, recall and F1 of ``probability >= threshold`` on ``units``, with intervals."""
    weights = _weights(units.records, settings.bootstrap_samples, settings.seed)
    figures = decision_figures(probability, units.positive, threshold, weights)
    return {name: _estimate(values, settings.ci_level) for name, values in figures.items()}


@dataclass(frozen=True)
class Calibration:
    """A fitted calibration of one method's variant at one level on one data set."""

    dataset: str
    method: str
    level: str
    variant: str
    settings: CalibrationSettings
    development_records: int
    development_units: int
    heldout_records: int
    heldout_units: int
    scaling: tuple[float, float]  #: the development scores' (min, max): the "before" reading
    maps: dict[str, IsotonicMap | PlattMap]
    threshold: float | None  #: on the probability of ``settings.kind``; None: the rule found none
    heldout: dict[str, dict[str, Estimate]]  #: reading ("uncalibrated", a kind, "flag") -> figures
    #: reading ("uncalibrated", ``settings.kind``) -> the held-out reliability diagram's points
    #: (mean probability, share hallucinated, units) per non-empty bin
    reliability: dict[str, list[list[float]]]

    def probability(self, scores: np.ndarray, kind: str | None = None) -> np.ndarray:
        """The probability of each score being a hallucination, by ``kind`` (default: the settings')."""
        return self.maps[kind or self.settings.kind](scores)

    def to_dict(self) -> dict[str, object]:
        return {
            "dataset": self.dataset,
            "method": self.method,
            "level": self.level,
            "variant": self.variant,
            "settings": asdict(self.settings),
            "ece_bins": ECE_BINS,
            "split": {
                "development_records": self.development_records,
                "development_units": self.development_units,
                "heldout_records": self.heldout_records,
                "heldout_units": self.heldout_units,
            },
            "scaling": list(self.scaling),
            "maps": {kind: fitted.to_dict() for kind, fitted in self.maps.items()},
            "threshold": self.threshold,
            "heldout": {
                reading: {name: e.to_list() for name, e in figures.items()} for reading, figures in self.heldout.items()
            },
            "reliability": self.reliability,
        }


def scaled(scores: np.ndarray, scaling: tuple[float, float]) -> np.ndarray:
    """The raw score min-max scaled to [0, 1] by ``scaling`` and clipped: the uncalibrated reading."""
    low, high = scaling
    span = high - low if high > low else 1.0
    return np.clip((np.asarray(scores, dtype=np.float64) - low) / span, 0.0, 1.0)


def choose_threshold(probability: np.ndarray, positive: np.ndarray, settings: CalibrationSettings) -> float | None:
    """The settings' rule on (cross-fitted) development probabilities."""
    if settings.rule == "best_f1":
        return best_f1_threshold(probability, positive)
    return precision_target_threshold(probability, positive, settings.target_precision)


def fit_calibration(dataset: str, method: str, units: CellUnits, settings: CalibrationSettings) -> Calibration:
    """Steps 1-4 of the module docstring on one variant's labelled units."""
    split = split_records(units.records, settings.development_share, settings.seed)
    development = _side(units, split.development, "development")
    heldout = _side(units, split.heldout, "held-out")
    maps = {kind: fit_map(kind, development.scores, development.positive) for kind in KINDS}
    threshold = choose_threshold(
        cross_fitted(settings.kind, development, settings.folds), development.positive, settings
    )
    scaling = (float(development.scores.min()), float(development.scores.max()))
    uncalibrated = scaled(heldout.scores, scaling)
    reliability = {
        "uncalibrated": reliability_bins(uncalibrated, heldout.positive),
        settings.kind: reliability_bins(maps[settings.kind](heldout.scores), heldout.positive),
    }
    readings = {"uncalibrated": probability_figures(uncalibrated, heldout, settings)}
    for kind, fitted in maps.items():
        readings[kind] = probability_figures(fitted(heldout.scores), heldout, settings)
    if threshold is not None:
        readings["flag"] = flag_figures(maps[settings.kind](heldout.scores), heldout, threshold, settings)
    return Calibration(
        dataset,
        method,
        units.level,
        units.variant,
        settings,
        len(split.development),
        len(development.scores),
        len(split.heldout),
        len(heldout.scores),
        scaling,
        maps,
        threshold,
        readings,
        reliability,
    )
