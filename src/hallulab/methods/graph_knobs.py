"""The ``similarities`` knob shared by the graph estimators over the samples (EigValLaplacian,
DegMat, Eccentricity), kept apart from the graph code so that declaring it imports nothing heavy."""

from __future__ import annotations

from typing import Any

from hallulab.core.config import setting

#: the graph's weights: NLI entailment, 1 - NLI contradiction, word-set Jaccard
SIMILARITIES = ("entail", "contra", "jaccard")


def similarities_setting(prefix: str) -> Any:
    """The ``similarities`` knob of a graph estimator whose variants are ``<prefix>_<similarity>``."""
    return setting(
        SIMILARITIES,
        choices=SIMILARITIES,
        scalar_ok=True,
        doc="the graph's weights: entail (NLI entailment, lm-polygraph's default), contra (1 - NLI "
        f"contradiction), jaccard (word sets); one variant {prefix}_<similarity> each",
    )
