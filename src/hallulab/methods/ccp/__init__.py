"""CCP, claim-conditioned probability (Fadeeva et al., "Fact-Checking the Output of Large
Language Models via Token-Level Uncertainty Quantification", §3-4; Tables 1-4, 9-12, Figure 7).

White-box claim-level uncertainty: for every word of a claim, the top-K alternatives of its
position are compared with the word by NLI; only alternatives that keep the claim's type
(entailment or contradiction) enter the denominator, only those that keep its meaning
(entailment) the numerator (:mod:`hallulab.methods.ccp.formula`). The claim score is
1 - prod CCP_word. Baselines (§4.1): Maximum Claim Probability, Perplexity, Maximum Token
Entropy and P(True).

Inputs are shared artifacts: ``claims`` (given by the data set, extracted by the
``extractor`` LLM role, or every sentence as a claim), ``response_tokens`` (the greedy
tokens with log-probabilities and the top-K_max alternatives, from the generating model or
teacher-forced through the ``proxy`` role) and ``sentences``. ``score`` runs the NLI model
(the shared NLI layer, ``-S nli=...``) on every (word, alternative) pair for the configured
contexts and both word units, and P(True); ``aggregate`` applies K, the context, the stop-word
rule and the claim aggregation without a model call.

Where the paper and lm-polygraph 0.7.0's released code differ, the default follows the paper
and the variants suffixed ``_ref`` follow the code: words (sub-word tokens merged; the
paper obtains whole-word alternatives by beam search, hallulab judges a word once at its
first token with that token's alternatives) vs every token separately; the stop-word rule on
the stripped, lower-cased word vs never (lm-polygraph calls its NLTK check with the token's
id, which is never in the word list, so no token counts as a function word); NLI
context: the claim prefix (the paper's standard) vs none (lm-polygraph's default). Ties of
the NLI argmax go to entailment, then contradiction, in both modes. Only the ``_ref`` variants
equal lm-polygraph's CCP; the others are the paper reading.

In both modes the written token is found among its alternatives by token id, as lm-polygraph
does (:func:`hallulab.methods.ccp.units.alternatives`), and a teacher-forced token outside its
own top-K is the first option with its own probability, a case lm-polygraph (greedy tokens
only) never meets.
"""

from hallulab.methods.ccp.raw import CCPScores
from hallulab.pipeline.spec import TEXT_LOGPROBS, KnobSection, MethodSpec, RoleCheck, StepInputs, unplanned

SPEC = MethodSpec(
    raw=CCPScores,
    name="ccp",
    title="CCP (claim-conditioned probability)",
    paper="Fadeeva et al., 2024 (CCP)",
    section="§3-4, Eq. 1-7; Tables 1-4, 9-12; Figure 7",
    level="claim",
    requires=("claims", "response_tokens", "sentences"),
    score=StepInputs(
        params=("nli", "ccp.score"),
        llm_roles=("proxy",),
        prompts=("ccp.ptrue_prompt",),
        files=("${nli.depends_on}",),
    ),
    aggregate=StepInputs(params=("ccp.aggregate",)),
    knob_curve="k",
    order=60,
    benchmark_variants=("ccp_k10_claimpref",),  # the paper's CCP: K = 10 alternatives, NLI with the claim prefix
    needs=(TEXT_LOGPROBS,),
    other_levels=("sentence", "response"),
    calls=unplanned("its NLI pairs follow the white-box pass's top-K alternatives"),
    knobs=(KnobSection("ccp.score", "knobs:CCPScoreKnobs"), KnobSection("ccp.aggregate", "knobs:CCPKnobs")),
    # the proxy's top-K alternatives of each claim word are what CCP's NLI judges
    role_checks=(
        RoleCheck(
            role="proxy",
            label="claim words within the proxy's top K",
            succeeded="aggregate_words_judged - aggregate_words_outside_top_k",
            of="aggregate_words_judged",
            failed="claim words were outside the proxy's top K",
        ),
    ),
)
