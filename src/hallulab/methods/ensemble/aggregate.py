"""The ensemble's one step: members' percentile ranks, their mean, and the cross-fitted
logistic regression over them (formulas in :mod:`hallulab.methods.ensemble`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from hallulab.core.units import COLUMNS, score_frame
from hallulab.data.schema import Record
from hallulab.methods.ensemble.knobs import EnsembleKnobs
from hallulab.methods.ensemble.logistic import fit_logistic
from hallulab.pipeline.context import AggregateContext, Aggregated
from hallulab.pipeline.members import MEMBER_PREFIX, MemberError, check_level, parse_members

POSITIVE_ABOVE = 0.499  # the evaluation's positive class at every level (levels.UNSUPPORTED_ABOVE)
MISSING_RANK = 0.5  # a member that did not score a unit enters the regression at the median rank


@dataclass(frozen=True)
class RankMatrix:
    """Every unit any member scored (rows, in first-seen order) by member (columns): the
    member's percentile rank of the unit, NaN where the member did not score it."""

    units: pd.DataFrame  # one row per unit: the unit columns of its first member's row
    ranks: np.ndarray
    members: tuple[str, ...]


def rank_matrix(members: Mapping[str, pd.DataFrame]) -> RankMatrix:
    """Percentile ranks ``rank_m(u) / n_m`` (average ranks for ties, +inf ranked highest)."""
    first = pd.concat(list(members.values()), ignore_index=True).drop_duplicates("unit_id", keep="first")
    units = first.reset_index(drop=True)
    position = pd.Series(np.arange(len(units)), index=units["unit_id"])
    ranks = np.full((len(units), len(members)), np.nan)
    for column, frame in enumerate(members.values()):
        percentile = frame["score"].rank(method="average", pct=True).to_numpy()
        ranks[position[frame["unit_id"]].to_numpy(), column] = percentile
    return RankMatrix(units, ranks, tuple(members))


def unit_positives(records: Sequence[Record], level: str) -> dict[str, bool]:
    """unit id -> the evaluation's positive class, for every labelled unit of ``level``."""
    found: dict[str, bool] = {}
    for record in records:
        if level == "sentence" and record.labels is not None:
            for index, label in enumerate(record.labels):
                found[f"{record.id}#sentence{index}"] = label > POSITIVE_ABOVE
        elif level == "claim":  # a method's own facts are labelled by no data set (evaluation.levels)
            for index, claim in enumerate(record.claims):
                if claim.label is not None:
                    found[f"{record.id}#claim{index}"] = claim.label > POSITIVE_ABOVE
        elif level == "response" and record.response_label is not None:
            found[f"{record.id}#response"] = record.response_label > POSITIVE_ABOVE
        elif level == "prompt" and record.prompt_label is not None:
            found[f"{record.id}#prompt"] = record.prompt_label > POSITIVE_ABOVE
    return found


def record_folds(records: Sequence[str], folds: int, seed: int) -> dict[str, int]:
    """Record id -> fold: a seeded permutation of the sorted records cut into ``folds`` parts."""
    ordered = sorted(set(records))
    shuffled = np.random.default_rng(seed).permutation(len(ordered))
    return {ordered[int(i)]: fold for fold, part in enumerate(np.array_split(shuffled, folds)) for i in part}


@dataclass(frozen=True)
class CrossFit:
    """The cross-fitted log-odds of every unit and what the fits did."""

    scores: np.ndarray
    weights: dict[str, float]  # the model fit on every labelled unit (what the members weigh)
    intercept: float
    labelled_units: int
    folds_one_class: int  # folds whose training labels held one class: scored by the rank mean


def cross_fit(matrix: RankMatrix, positives: Mapping[str, bool], knobs: EnsembleKnobs) -> CrossFit | None:
    """None when no unit is labelled (the supervised combiner has nothing to learn from)."""
    unit_ids = matrix.units["unit_id"].to_numpy()
    records = matrix.units["record_id"].to_numpy()
    features = np.where(np.isnan(matrix.ranks), MISSING_RANK, matrix.ranks)
    labelled = np.array([uid in positives for uid in unit_ids])
    if not labelled.any():
        return None
    y = np.array([positives.get(uid, False) for uid in unit_ids], dtype=np.float64)
    folds = record_folds(records[labelled].tolist(), knobs.folds, knobs.seed)
    fold_of = np.array([folds.get(record, -1) for record in records])
    fallback = np.nanmean(matrix.ranks, axis=1)
    scores = np.empty(len(unit_ids))
    one_class = 0
    for fold in range(knobs.folds):
        train = labelled & (fold_of != fold)
        target = fold_of == fold
        if not target.any():
            continue
        if len(set(y[train].tolist())) < 2:
            one_class += 1
            scores[target] = fallback[target]
            continue
        model = fit_logistic(features[train], y[train], knobs.l2)
        scores[target] = model.decision_function(features[target])
    full = fit_logistic(features[labelled], y[labelled], knobs.l2) if len(set(y[labelled].tolist())) > 1 else None
    unlabelled = fold_of == -1
    if full is not None and unlabelled.any():  # scikit-learn refuses to score zero rows
        scores[unlabelled] = full.decision_function(features[unlabelled])
    elif full is None:
        scores[unlabelled] = fallback[unlabelled]
    weights: dict[str, float] = {}
    if full is not None:
        weights = {m: round(float(w), 6) for m, w in zip(matrix.members, full.coef_[0], strict=True)}
    return CrossFit(
        scores=scores,
        weights=weights,
        intercept=0.0 if full is None else round(float(full.intercept_[0]), 6),
        labelled_units=int(labelled.sum()),
        folds_one_class=one_class,
    )


def _rows(matrix: RankMatrix, variant: str, scores: np.ndarray) -> pd.DataFrame:
    frame = matrix.units[list(COLUMNS)].copy()
    frame["variant"] = variant
    frame["score"] = scores
    return frame


def aggregate(ctx: AggregateContext[None]) -> Aggregated:
    knobs = ctx.params.typed(EnsembleKnobs, "ensemble")
    check_level(knobs.level, "ensemble.level")
    members = parse_members(knobs.members, "ensemble.members", "ensemble")
    absent = [m.key for m in members if m.key not in ctx.members]
    if absent:
        raise MemberError(f"ensemble.members: no scores given for {absent}; given: {list(ctx.members)}")
    present = {key: frame for key, frame in ctx.members.items() if not frame.empty}
    absent = [key for key, frame in ctx.members.items() if frame.empty]
    if not present:
        raise MemberError(f"ensemble.members: none of {absent} wrote {knobs.level} units under this run's settings")
    if absent:
        ctx.log.warning("ensemble: %s absent under this run's settings; combining %s", absent, list(present))
    matrix = rank_matrix(present)
    missing = int(np.isnan(matrix.ranks).any(axis=1).sum())
    diagnostics: dict[str, object] = {
        "level": knobs.level,
        "members": {key: len(frame) for key, frame in present.items()},
        **({"members_absent": absent} if absent else {}),
        "units": len(matrix.units),
        "units_missing_members": missing,
    }
    parts = []
    if "rank_mean" in knobs.combiners:
        parts.append(_rows(matrix, "rank_mean", np.nanmean(matrix.ranks, axis=1)))
    if "logistic" in knobs.combiners:
        fitted = cross_fit(matrix, unit_positives(ctx.records, knobs.level), knobs)
        if fitted is None:
            ctx.log.warning("ensemble: no labelled %s unit; logistic_cv%d is not written", knobs.level, knobs.folds)
            diagnostics["logistic_skipped"] = f"no labelled {knobs.level} unit to fit on"
        else:
            parts.append(_rows(matrix, f"logistic_cv{knobs.folds}", fitted.scores))
            diagnostics["logistic"] = {
                "folds": knobs.folds,
                "l2": knobs.l2,
                "labelled_units": fitted.labelled_units,
                "folds_one_class": fitted.folds_one_class,
                "weights_full_fit": fitted.weights,
                "intercept_full_fit": fitted.intercept,
            }
    for key, rows in present.items():  # the members as they scored, for the paired comparison
        method, variant = key.split("/", 1)
        parts.append(rows.assign(variant=f"{MEMBER_PREFIX}{method}.{variant}"))
    frame = pd.concat(parts, ignore_index=True) if parts else None
    return Aggregated(score_frame(frame), diagnostics)
