"""CoCoA, confidence and consistency (Vashurin et al., 2025, "Uncertainty Quantification for
LLMs through Minimum Bayes Risk: Bridging Confidence and Consistency", the CoCoA family), as
lm-polygraph 0.7.0's ``CocoaMSP``, ``CocoaPPL`` and ``CocoaMTE`` compute it: the response's
information-based uncertainty u(y*), read from its own token statistics, times its mean
dissimilarity to the samples,

    CoCoA_u(y*) = u(y*) * (1/M) sum_j (1 - g(y*, y_j)),

g(y*, y_j) the similarity of the response and sample j, both orders averaged. One variant per
u (the formulas are in :mod:`hallulab.methods.cocoa.formula`); higher means more likely
hallucinated:

* ``cocoa_msp``: u = -log p(y* | x), the sum of the response's token log-probabilities negated
  (maximum sequence probability as lm-polygraph reads it);
* ``cocoa_ppl``: u = -(1/L) sum_i log p(y*_i), the logarithm of the perplexity;
* ``cocoa_mte``: u = (1/L) sum_i H_i, the mean entropy of the next-token distributions (needs a
  token source with entropies: the ``hf`` and ``vllm`` backends give them).

The response's tokens, log-probabilities and entropies are the ``response_tokens`` artifact's:
the generating model's when the pipeline wrote the response (lm-polygraph's greedy statistics),
else the proxy LLM's, teacher-forced (the grey-box baselines' source). The similarity g comes from
``sentence_similarity`` (:mod:`hallulab.methods.sentence_similarity`): offline, the clipped
cosine of the packaged MiniLM encoder's embeddings; the paper's and lm-polygraph's STS-B
cross-encoder with ``-S sentence_similarity=stsb_roberta_large`` (hub). The score step stores
the response's similarity to each of the N_max samples; N and the choice of samples are cheap
knobs of the aggregate step. The formulas downstream of the log-probabilities, entropies and
similarities are lm-polygraph's (tests/test_reference_parity_sar_cocoa.py).
"""

from hallulab.methods.cocoa.raw import CocoaScores
from hallulab.methods.sample_selection import SAMPLE_CHOICE_PARAMS
from hallulab.pipeline.spec import NO_MODEL_CALLS, SAMPLES, TEXT_LOGPROBS, MethodSpec, StepInputs

SPEC = MethodSpec(
    name="cocoa",
    title="CoCoA: confidence times consistency (MSP, perplexity, mean token entropy)",
    paper="Vashurin et al., 2025 (lm-polygraph's CocoaMSP, CocoaPPL, CocoaMTE)",
    section="CoCoA: u(y*) times the mean dissimilarity to the samples",
    level="response",
    requires=("response_tokens",),
    raw=CocoaScores,
    score=StepInputs(params=("sentence_similarity",)),
    aggregate=StepInputs(params=SAMPLE_CHOICE_PARAMS),
    order=26,
    benchmark_variants=("cocoa_msp", "cocoa_ppl", "cocoa_mte"),  # lm-polygraph's three estimators
    needs=(SAMPLES, TEXT_LOGPROBS),
    calls=NO_MODEL_CALLS,  # a sentence encoder, no LLM or NLI call (the token statistics are an artifact's)
)
