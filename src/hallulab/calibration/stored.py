"""A calibration as a file, and applied to scores: ``probability`` and ``flag`` beside ``score``.

The file is plain JSON (:meth:`hallulab.calibration.fit.Calibration.to_dict`) with a format
number and the SHA-256 of its canonical content, so a file from another format, one edited by
hand or a damaged one is refused in one line, as is a calibration made for another method,
variant or level than the scores it is applied to. A matching hash proves only that the file is
as its writer sealed it, so every field it applies is checked too (finite numbers, isotonic knots
strictly increasing in the score and non-decreasing probabilities in [0, 1], a threshold in
[0, 1] its map can reach, a scaling range in order): one that fails is a one-line error naming
the file and the field, and the writer refuses to write what the reader would refuse.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from hallulab.calibration.fit import Calibration, CalibrationError
from hallulab.calibration.maps import (
    KINDS,
    IsotonicMap,
    MapError,
    PlattMap,
    beyond_fitted_range,
    highest_probability,
    map_from_dict,
)
from hallulab.core.io import atomic_open

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

#: the layout of a calibration file; a reader refuses any other
FORMAT = 1
#: where the committed calibrations lie, per data set (results/calibration/<data set>/<method>.<variant>.json)
CALIBRATIONS_DIR = Path("results/calibration")
#: the package's folder of them (in ``hallulab.calibration``): in a checkout a link to
#: :data:`CALIBRATIONS_DIR`, in a wheel a copy of its files (``pyproject.toml``'s package data)
PACKAGED_DIR = "committed"


def _digest(content: dict[str, Any]) -> str:
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def sealed_text(content: dict[str, Any]) -> str:
    """A calibration file's text: ``content`` (with its ``format``) and the SHA-256 of it."""
    return json.dumps({**content, "sha256": _digest(content)}, indent=2) + "\n"


def write_calibration(path: Path, calibration: Calibration) -> None:
    """``calibration`` written to ``path``; content its reader would refuse (a threshold above
    every probability its map gives, say) is a one-line :class:`CalibrationError` instead."""
    content = {"format": FORMAT, **calibration.to_dict()}
    _stored(path, json.loads(json.dumps(content)))
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path) as handle:
        handle.write(sealed_text(content))


@dataclass(frozen=True)
class StoredCalibration:
    """What applying a calibration needs, read back from its file."""

    path: Path
    dataset: str
    method: str
    level: str
    variant: str
    kind: str
    probability_map: IsotonicMap | PlattMap
    threshold: float | None
    #: the lowest and highest score it was fitted on: beyond them its probability is an end value
    fitted_range: tuple[float, float]

    @property
    def name(self) -> str:
        """How the output names it: ``<data set>/<method>/<variant>@<level> (<kind>)``."""
        return f"{self.dataset}/{self.method}/{self.variant}@{self.level} ({self.kind})"


def _verified(source: Path | Traversable) -> dict[str, Any]:
    """The content of the calibration file ``source`` (a path, or a packaged resource), its
    format and digest checked."""
    try:
        stored = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CalibrationError(f"{source}: not a calibration file ({error})") from error
    if not isinstance(stored, dict):
        raise CalibrationError(f"{source}: not a calibration file (no JSON object)")
    if stored.get("format") != FORMAT:
        raise CalibrationError(
            f"{source}: calibration format {stored.get('format')!r}, this hallulab reads {FORMAT}: make it again "
            "(hallulab calibrate; python -m hallulab.calibration for the committed ones)"
        )
    content = {key: value for key, value in stored.items() if key != "sha256"}
    if stored.get("sha256") != _digest(content):
        raise CalibrationError(f"{source}: its content does not match its sha256 (edited by hand or damaged)")
    return content


def read_calibration(source: Path | Traversable) -> StoredCalibration:
    """The calibration in ``source`` (a file, or a packaged resource); another format, a changed
    byte, a missing field or content no fit gives is a one-line :class:`CalibrationError`
    naming it and the field."""
    return _stored(source, _verified(source))


def _field_error(path: Path | Traversable, field: str, problem: str) -> CalibrationError:
    return CalibrationError(f"{path}: field {field!r}: {problem}")


def _text(path: Path | Traversable, stored: dict[str, Any], key: str) -> str:
    value = stored.get(key)
    if not isinstance(value, str) or not value:
        raise _field_error(path, key, "missing or not a non-empty string")
    return value


def _finite_number(path: Path | Traversable, value: object, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _field_error(path, field, f"{value!r} is not a finite number")
    return float(value)


def _kind(path: Path | Traversable, stored: dict[str, Any]) -> str:
    settings = stored.get("settings")
    kind = settings.get("kind") if isinstance(settings, dict) else None
    if kind not in KINDS:
        raise _field_error(path, "settings.kind", f"{kind!r} is not one of {KINDS}")
    return str(kind)


def _map(path: Path | Traversable, stored: dict[str, Any], kind: str) -> IsotonicMap | PlattMap:
    maps = stored.get("maps")
    if not isinstance(maps, dict) or kind not in maps:
        raise _field_error(path, f"maps.{kind}", "missing: the map of the calibration's kind")
    try:
        return map_from_dict(kind, maps[kind])
    except MapError as error:
        raise _field_error(path, ".".join(filter(None, ("maps", kind, error.field))), error.problem) from None


def _threshold(
    path: Path | Traversable, stored: dict[str, Any], fitted: IsotonicMap | PlattMap, kind: str
) -> float | None:
    """None (the rule found no threshold: no flag), or a probability the map can reach: above
    its highest probability the flag would be False for every score. Below its lowest it flags
    every score, which a rule may choose (flagging every unit can give the best F1)."""
    if "threshold" not in stored:
        raise _field_error(path, "threshold", "missing (null when the rule found none)")
    if stored["threshold"] is None:
        return None
    threshold = _finite_number(path, stored["threshold"], "threshold")
    if not 0.0 <= threshold <= 1.0:
        raise _field_error(path, "threshold", f"{threshold!r} is not a probability in [0, 1]")
    highest = highest_probability(fitted)
    if threshold > highest:
        raise _field_error(
            path, "threshold", f"{threshold!r} is above {highest!r}, the highest probability its {kind} map gives"
        )
    return threshold


def _scaling(path: Path | Traversable, value: object) -> tuple[float, float]:
    if not isinstance(value, list) or len(value) != 2:
        raise _field_error(path, "scaling", "missing or not the two numbers [lowest, highest]")
    low = _finite_number(path, value[0], "scaling[0]")
    high = _finite_number(path, value[1], "scaling[1]")
    if low > high:
        raise _field_error(path, "scaling", f"lowest {low!r} above highest {high!r}")
    return low, high


def _stored(path: Path | Traversable, stored: dict[str, Any]) -> StoredCalibration:
    """The calibration in ``stored`` (the content of ``path``, or of the packaged calibration
    ``path`` names), every field it applies checked: a missing or malformed one, a number that
    is not finite, knots out of order, a probability outside [0, 1] or a threshold no score can
    reach is a one-line :class:`CalibrationError` naming ``path`` and the field."""
    kind = _kind(path, stored)
    fitted = _map(path, stored, kind)
    return StoredCalibration(
        Path(str(path)),
        _text(path, stored, "dataset"),
        _text(path, stored, "method"),
        _text(path, stored, "level"),
        _text(path, stored, "variant"),
        kind,
        fitted,
        _threshold(path, stored, fitted, kind),
        _scaling(path, stored.get("scaling")),
    )


#: one reliability bin: the mean probability, the share of hallucinated units, the units in it
ReliabilityBin = tuple[float, float, int]


@dataclass(frozen=True)
class HeldoutReliability:
    """A calibration's check on its held-out records, as its file stores it: the reliability
    bins and the ECE (point, then the interval's ends) of each reading (``uncalibrated``: the
    score min-max scaled over the development units; the calibration's own kind)."""

    calibration: StoredCalibration
    heldout_units: int
    ece_bins: int
    bins: dict[str, tuple[ReliabilityBin, ...]]
    ece: dict[str, tuple[float | None, float | None, float | None]]
    #: the held-out Brier score (point, interval's ends) of ``uncalibrated`` and of each kind's map
    brier: dict[str, tuple[float | None, float | None, float | None]]


def _interval(stored: list[float | None]) -> tuple[float | None, float | None, float | None]:
    point, low, high = (None if value is None else float(value) for value in stored)
    return point, low, high


def read_heldout_reliability(path: Path | Traversable) -> HeldoutReliability:
    """The held-out reliability of the calibration in ``path`` (checked as :func:`read_calibration` checks)."""
    content = _verified(path)
    calibration = _stored(path, content)
    field = "split.heldout_units"
    try:
        readings = ("uncalibrated", calibration.kind)
        heldout_units = int(content["split"]["heldout_units"])
        field = "ece_bins"
        ece_bins = int(content["ece_bins"])
        field = "reliability"
        bins = {
            reading: tuple((float(p), float(rate), int(n)) for p, rate, n in content["reliability"][reading])
            for reading in readings
        }
        field = "heldout"
        ece = {reading: _interval(content["heldout"][reading]["ece"]) for reading in readings}
        brier = {reading: _interval(content["heldout"][reading]["brier"]) for reading in ("uncalibrated", *KINDS)}
    except (KeyError, TypeError, ValueError) as error:
        problem = f"missing {error}" if isinstance(error, KeyError) else f"malformed ({error})"
        raise _field_error(path, field, problem) from None
    return HeldoutReliability(calibration, heldout_units, ece_bins, bins, ece, brier)


def committed_calibrations(root: Path, dataset: str) -> list[Path]:
    """The calibration files committed for ``dataset`` under the checkout ``root``."""
    return sorted((root / CALIBRATIONS_DIR / dataset).glob("*.json"))


def committed_folder() -> Path | Traversable:
    """Where the committed calibrations are read from: the running checkout's
    ``results/calibration`` when hallulab runs from a checkout, else the copy the package ships
    (``hallulab/calibration/committed``, read through :func:`importlib.resources.files`).

    The checkout wins because it is the folder ``python -m hallulab.calibration`` writes and
    ``--check`` compares, and a message naming ``results/calibration/...`` names a file one can
    open. The two are the same files in a checkout (the package's folder is a link to it, which
    the build follows), so the choice changes no number; it only keeps a checkout right where
    the link is not followed."""
    from hallulab.core.config import package_checkout

    checkout = package_checkout()
    if checkout is not None:
        return checkout / CALIBRATIONS_DIR
    return importlib.resources.files("hallulab.calibration") / PACKAGED_DIR


def committed_files(folder: Path | Traversable) -> list[tuple[str, Path | Traversable]]:
    """``(<data set>/<file name>, file)`` for every ``.json`` entry of each data set's folder
    under ``folder`` (:func:`committed_folder`), sorted; none when the folder is missing."""
    if not folder.is_dir():
        return []
    found: list[tuple[str, Path | Traversable]] = []
    for dataset in sorted((entry for entry in folder.iterdir() if entry.is_dir()), key=lambda entry: entry.name):
        for entry in sorted(dataset.iterdir(), key=lambda entry: entry.name):
            if entry.name.endswith(".json"):
                found.append((f"{dataset.name}/{entry.name}", entry))
    return found


def resolve_calibration(choice: str | Path, method: str) -> StoredCalibration:
    """The calibration ``choice`` names for ``method``: a calibration file's path, or a data
    set's name, which reads the committed calibration of the method's headline benchmark
    variant on that data set (``<data set>/<method>.<variant>.json`` in :func:`committed_folder`:
    a checkout's ``results/calibration``, or the installed package's copy)."""
    path = Path(choice)
    if path.suffix == ".json" or path.exists():
        if path.is_dir():
            raise CalibrationError(f"calibration {choice}: is a folder; name a calibration file")
        if not path.is_file():
            raise CalibrationError(f"calibration {choice}: no such file")
        stored = read_calibration(path)
        if stored.method != method:
            raise CalibrationError(f"{path}: a calibration of {stored.method}, not of {method}")
        return stored
    return _committed(str(choice), method, committed_folder())


def _committed(name: str, method: str, folder: Path | Traversable) -> StoredCalibration:
    """The committed calibration of ``method``'s headline benchmark variant on the data set
    ``name``, from ``folder``; a name without one is a line listing the names that have one."""
    from hallulab.pipeline import registry

    spec = registry.method(method)
    variant = spec.benchmark_variants[0] if spec.benchmark_variants else None
    wanted = f"{method}.{variant}.json"
    files = dict(committed_files(folder))
    if not files:
        raise CalibrationError(
            f"calibration {name!r}: no committed calibration in {folder}; give a calibration file's path "
            "(hallulab calibrate makes one on your labelled records)"
        )
    if variant is None or f"{name}/{wanted}" not in files:
        made = sorted(shown.split("/")[0] for shown in files if shown.endswith(f"/{wanted}"))
        raise CalibrationError(
            f"calibration {name!r}: no committed calibration of {method} ({variant}) on it; the data sets with one: "
            f"{', '.join(made) or 'none'} (hallulab calibrate makes one on your labelled records)"
        )
    stored = read_calibration(files[f"{name}/{wanted}"])
    if stored.method != method:
        raise CalibrationError(f"{stored.path}: a calibration of {stored.method}, not of {method}")
    return stored


def calibrated(scores: pd.DataFrame, calibration: StoredCalibration) -> pd.DataFrame:
    """``scores`` (the API's unit scores of one method) with ``probability`` (that the unit is
    hallucinated, by the calibration's map), ``flag`` (probability at or above its threshold)
    and ``calibration`` (its name) on the rows of its variant and level; the other rows get
    none. Scores of another method, or holding no row of its variant at its level, are refused."""
    methods = sorted(set(scores["method"])) if "method" in scores else []
    if methods and methods != [calibration.method]:
        raise CalibrationError(
            f"{calibration.path}: a calibration of {calibration.method}, not of {', '.join(methods)}"
        )
    rows = (scores["variant"] == calibration.variant) & (scores["level"] == calibration.level)
    if not rows.any():
        held = sorted({f"{v}@{lv}" for v, lv in zip(scores["variant"], scores["level"], strict=True)})
        raise CalibrationError(
            f"{calibration.path}: made for {calibration.variant} at the {calibration.level} level; the scores hold "
            f"{', '.join(held) or 'no unit'} (ask for every variant: --variants all)"
        )
    out = scores.copy()
    probability = np.full(len(out), np.nan)
    probability[rows.to_numpy()] = calibration.probability_map(out.loc[rows, "score"].to_numpy(dtype=np.float64))
    out["probability"] = probability
    flag = pd.array([pd.NA] * len(out), dtype="boolean")
    if calibration.threshold is not None:
        flag[rows.to_numpy()] = probability[rows.to_numpy()] >= calibration.threshold
    out["flag"] = flag
    out["calibration"] = pd.Series([calibration.name if row else None for row in rows], index=out.index, dtype=object)
    return out


def outside_fitted_range(scores: pd.DataFrame, calibration: StoredCalibration) -> int:
    """How many of the calibrated rows' scores lie outside the scores the calibration was fitted
    on: there its probability is a reading it was never checked on (:func:`range_warning`;
    scores made otherwise: another number of samples, other text, other settings)."""
    low, high = calibration.fitted_range
    mine = scores.loc[scores["calibration"].notna(), "score"].to_numpy(dtype=np.float64)
    return int(((mine < low) | (mine > high)).sum())


def range_warning(calibration: StoredCalibration, outside: int, calibrated_rows: int) -> str:
    """The warning for ``outside`` of ``calibrated_rows`` scores beyond the fitted range, true
    to the calibration's kind: isotonic holds the value at the nearest end, Platt extrapolates."""
    low, high = calibration.fitted_range
    return (
        f"calibration {calibration.name}: {outside} of {calibrated_rows} scores lie outside the scores it was "
        f"fitted on [{low:.4g}, {high:.4g}]; {beyond_fitted_range(calibration.kind)} (scores made otherwise than "
        "its data set's: calibrate on labelled data like yours, hallulab calibrate)"
    )
