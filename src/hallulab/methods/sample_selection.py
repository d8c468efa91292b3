"""The ``samples`` knobs: N, which N of the stored samples, and how their scores combine.

Read once for every method over samples (the SelfCheckGPT variants, FactSelfCheck, Lexical
Similarity, Semantic Entropy, the graph estimators, ...) by their cheap aggregate stages, so a
sweep over them calls no model. Kept apart from the sample-matrix code so that declaring them
imports nothing heavy.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from hallulab.core.config import ConfigError, setting

SELECTIONS = ("first", "random")
AGGREGATIONS = ("mean", "median", "max")


@dataclass(frozen=True)
class SampleKnobs:
    """``samples`` knobs read by the cheap aggregate stages: N, which N, and how their scores combine."""

    used: int | None = setting(None, minimum=1, doc="N; null = every stored sample")
    selection: str = setting("first", choices=SELECTIONS, doc="the first N samples, or a seeded random N")
    aggregation: str = setting("mean", choices=AGGREGATIONS, doc="over the N samples; SelfCheckGPT: mean")
    seed: int = 0

    def __post_init__(self) -> None:
        if self.selection not in SELECTIONS:
            raise ConfigError(f"samples.selection: {self.selection!r} is not one of {list(SELECTIONS)}")
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"samples.aggregation: {self.aggregation!r} is not one of {list(AGGREGATIONS)}")
        if self.used is not None and self.used < 1:
            raise ConfigError(f"samples.used: must be >= 1, got {self.used}")


#: The params keys of :class:`SampleKnobs` (what an aggregate step over samples declares).
SELECTION_PARAMS = tuple(f"samples.{f.name}" for f in fields(SampleKnobs))
#: The keys that choose which stored samples a method uses (no aggregation over them): what the
#: methods that pool the chosen samples declare (n-gram's model, FactSelfCheck's frequencies).
SAMPLE_CHOICE_PARAMS = ("samples.used", "samples.selection", "samples.seed")
