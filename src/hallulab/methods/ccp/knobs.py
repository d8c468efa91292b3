"""CCP's knob classes and the choices they name, kept apart from the method's code so that
declaring them (:attr:`~hallulab.pipeline.spec.MethodSpec.knobs`) imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass

from hallulab.core.config import setting

CONTEXTS = ("no_context", "claim_prefix", "sentence_prefix")
AGGREGATIONS = ("prod", "len", "min", "mean")
STOPWORD_RULES = ("paper", "reference", "none")
#: what an alternative that is only spaces or punctuation counts as in the paper's word mode:
#: ``neutral`` (this project's rule: a line break or a comma is another continuation, not
#: another value of the claim), or ``nli`` (the NLI model's class of the stripped strings, as
#: lm-polygraph 0.7.0 judges every alternative). Neither paper nor released code states it.
BLANK_RULES = ("neutral", "nli")


@dataclass(frozen=True)
class CCPKnobs:
    """params ``ccp.aggregate`` (the sweep knobs; no model call)."""

    k: tuple[int, ...] = setting(
        tuple(range(1, 11)), minimum=1, scalar_ok=True, doc="alternatives per word (K <= K_max); Figure 7: 1..10"
    )
    nli_context: tuple[str, ...] = setting(
        ("claim_prefix", "no_context", "sentence_prefix"),
        choices=CONTEXTS,
        scalar_ok=True,
        doc="the NLI contexts whose variants are written (Table 11: all three)",
    )
    word_merge: bool = setting(
        True, doc="the paper's words (sub-word tokens merged); false: every token, as lm-polygraph"
    )
    stopwords: str = setting(
        "paper",
        choices=STOPWORD_RULES,
        doc="paper: the NLTK list on the stripped word; reference: on the raw token (lm-polygraph); none",
    )
    claim_aggregation: tuple[str, ...] = setting(
        AGGREGATIONS, choices=AGGREGATIONS, scalar_ok=True, doc="Table 9; prod is the paper's"
    )
    reference_compatible: bool = setting(True, doc="also emit lm-polygraph's mode (tokens, raw-token stop words)")
    blank_alternatives: str = setting(
        "neutral", choices=BLANK_RULES, doc="a space/punctuation alternative: neutral | the NLI model's class"
    )


@dataclass(frozen=True)
class CCPScoreKnobs:
    """params ``ccp.score`` (read by the expensive step)."""

    nli_contexts: tuple[str, ...] = setting(
        ("claim_prefix", "no_context", "sentence_prefix"),
        choices=CONTEXTS,
        scalar_ok=True,
        doc="the NLI contexts the pairs are scored in (Table 11: all three)",
    )
    ptrue_top_k: int = setting(20, minimum=1, doc="first-token top-K read for P(True)")
