"""Claim-conditioned probability (Fadeeva et al., §4.2) and the claim-level baselines of §4.1.

For a word x_j of a claim with top-K alternatives x_j^k (x_j^1 = x_j), each compared with
x_j by NLI in both directions:

    CCP_word(x_j) = sum_{k: NLI(x_j^k, x_j) = e} P(x_j^k | x_<j)
                    / sum_{k: NLI(x_j^k, x_j) in {e, c}} P(x_j^k | x_<j)            (§4.2.2)

    CCP_claim(C) = 1 - prod_{j in C} CCP_word(x_j)                                    (Eq. 7)

The two NLI directions combine as lm-polygraph does: equal classes give that class;
entailment one way and contradiction the other give neutral; otherwise the non-neutral one
wins. The word itself always counts as entailment. A function word (NLTK's stop-word list)
has CCP = 1 (§4.2.2). Computed in log space (``logaddexp``).

Other claim aggregations (Table 9): ``len`` 1 - exp(mean log CCP), ``min`` 1 - min CCP,
``mean`` 1 - mean CCP. Baselines over the claim's tokens (§4.1): Maximum Probability
1 - prod p (Eq. 1), Perplexity exp(-mean log p) (Eq. 2), Maximum Token Entropy max H (Eq. 3),
P(True) 1 - P(first reply token = "True") (Eq. 4).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hallulab.core.config import ConfigError
from hallulab.methods.ccp.knobs import AGGREGATIONS

ENTAIL, NEUTRAL, CONTRA = "e", "n", "c"


def combine_nli(forward: str, backward: str) -> str:
    """One class from NLI(x^k, x) and NLI(x, x^k)."""
    if forward == backward:
        return forward
    if {forward, backward} == {ENTAIL, CONTRA}:
        return NEUTRAL
    for kind in (ENTAIL, CONTRA):
        if kind in (forward, backward):
            return kind
    return NEUTRAL


def word_log_ccp(logprobs: Sequence[float], classes: Sequence[str]) -> float:
    """log CCP_word for one position: ``logprobs[0]`` / ``classes[0]`` is the word itself
    (its class is ignored: always entailment); the rest are its alternatives."""
    entail = [logprobs[0], *(lp for lp, c in zip(logprobs[1:], classes[1:], strict=True) if c == ENTAIL)]
    decided = [logprobs[0], *(lp for lp, c in zip(logprobs[1:], classes[1:], strict=True) if c in (ENTAIL, CONTRA))]
    return float(np.logaddexp.reduce(entail) - np.logaddexp.reduce(decided))


def claim_ccp(log_ccps: Sequence[float], aggregation: str = "prod") -> float:
    """Claim uncertainty from its words' log CCP (higher = more likely false)."""
    if not log_ccps:
        raise ValueError("a claim needs at least one word")
    values = np.asarray(log_ccps, dtype=np.float64)
    if aggregation == "prod":
        return float(1.0 - math.exp(values.sum()))
    if aggregation == "len":
        return float(1.0 - math.exp(values.mean()))
    if aggregation == "min":
        return float(1.0 - math.exp(values.min()))
    if aggregation == "mean":
        return float(1.0 - np.exp(values).mean())
    raise ConfigError(f"ccp.claim_aggregation: {aggregation!r} is not one of {list(AGGREGATIONS)}")
