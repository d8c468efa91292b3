"""The ensemble's knob class and the combiners it names, kept apart from the fitting code
(scikit-learn) so that declaring it imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.config import setting
from hallulab.core.levels import LEVELS
from hallulab.pipeline.members import Member

COMBINERS = ("rank_mean", "logistic")


@dataclass(frozen=True)
class EnsembleKnobs:
    """params ``ensemble`` (the member list is checked by :func:`parse_members`)."""

    level: str = setting("sentence", choices=LEVELS, doc="the level every member scores")
    members: tuple[Member, ...] = setting((), doc="[{method, variant}, ...]: registered methods' variants")
    combiners: tuple[str, ...] = setting(COMBINERS, choices=COMBINERS, scalar_ok=True)
    folds: int = setting(5, minimum=2, doc="cross-fitting folds over the labelled records")
    l2: float = setting(1.0, above=0.0, doc="lambda of the L2 penalty (scikit-learn's C = 1 / lambda)")
    seed: int = setting(0, doc="the seed of the fold assignment")
