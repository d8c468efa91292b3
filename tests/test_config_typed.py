"""Every setting is checked once, in its typed config, and an error names it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from hallulab.core.config import ConfigError, setting, typed
from hallulab.methods.selfcheck_mqag.knobs import MQAGScoringKnobs
from hallulab.methods.selfcheck_ngram.knobs import NgramKnobs


@dataclass(frozen=True)
class _Example:
    count: int = setting(1, minimum=1)
    rate: float = setting(0.5, above=0.0, maximum=1.0)
    names: tuple[str, ...] = setting(("a",), choices=("a", "b"), scalar_ok=True)
    flag: bool = False
    optional: int | None = None


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"count": 2.7}, "ex.count: expected an integer, got 2.7 (float)"),
        ({"count": "abc"}, "ex.count: expected an integer, got 'abc' (str)"),
        ({"count": 0}, "ex.count: must be >= 1, got 0"),
        ({"rate": 0.0}, "ex.rate: must be > 0.0, got 0.0"),
        ({"names": ["c"]}, "ex.names: 'c' is not one of ['a', 'b']"),
        ({"flag": "yes"}, "ex.flag: expected true or false, got 'yes' (str)"),
        ({"colour": 1}, "ex: unknown setting(s) ['colour']"),
    ],
)
def test_bad_values_name_the_setting(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        typed(_Example, raw, "ex")
    assert message in str(caught.value)


def test_a_sweep_point_may_be_one_value_of_a_list_setting() -> None:
    assert typed(_Example, {"names": "b", "optional": None}, "ex").names == ("b",)
    assert typed(NgramKnobs, {"n": 3}, "selfcheck_ngram").n == (3,)


def test_method_knobs_reject_the_values_that_used_to_pass_silently() -> None:
    with pytest.raises(ConfigError, match=r"selfcheck_ngram.n\[0\]: expected an integer, got 2.7"):
        typed(NgramKnobs, {"n": 2.7}, "selfcheck_ngram")
    with pytest.raises(ConfigError, match=r"selfcheck_ngram.smoothing_k: must be >= 0.0, got -1"):
        typed(NgramKnobs, {"smoothing_k": -1}, "selfcheck_ngram")
    with pytest.raises(ConfigError, match=r"selfcheck_mqag.aggregate.beta1: must be > 0.0"):
        typed(MQAGScoringKnobs, {"beta1": 0.0}, "selfcheck_mqag.aggregate")
