"""SAR, Shifting Attention to Relevance (Duan et al., 2024, "Shifting Attention to Relevance:
Towards the Predictive Uncertainty Quantification of Free-Form Large Language Models", ACL, §4),
as lm-polygraph 0.7.0's ``TokenSAR``, ``SentenceSAR`` and ``SAR`` compute it: uncertainty in
which the tokens and the samples that carry the meaning weigh more. Three readings, one variant
each (the formulas are in :mod:`hallulab.methods.sar.formula`); higher means more likely
hallucinated:

* ``token_sar``: the response's relevance-weighted negative log-likelihood,
  TokenSAR = -sum_i R~_T(z_i) log p(z_i), the relevance of token z_i being
  R_T(z_i) = 1 - g(x ∪ z, x ∪ z without z_i) (normalised to sum to one), g a sentence
  similarity and x the record's prompt; the tokens and their log-probabilities are the
  ``response_tokens`` artifact's (the generating model's, or the proxy's teacher-forced ones);
* ``sentence_sar``: over the N chosen samples s_j with probabilities p_j = p(s_j | x),
  SentenceSAR = (1/N) sum_j -log(p_j + (1/t) sum_{k != j} g(s_j, s_k) p_k): a sample that the
  other probable samples resemble is less uncertain;
* ``sar``: SentenceSAR with each p_j replaced by its token-shifted probability
  exp(-TokenSAR(s_j)): the paper's method.

The samples' token log-probabilities come from teacher forcing them through the ``proxy`` LLM
after ``sar.score.prefix`` (the question; the data sets carry the samples' texts only), the
similarity g from ``sentence_similarity`` (:mod:`hallulab.methods.sentence_similarity`): offline,
the clipped cosine of the packaged MiniLM encoder's embeddings; the papers' and lm-polygraph's
STS-B cross-encoder with ``-S sentence_similarity=stsb_roberta_large`` (hub). The score step
stores, per sample, its sequence log-probability and its TokenSAR, and the N_max x N_max
similarities; N, the choice of samples and t (0.001, lm-polygraph's) are cheap knobs of the
aggregate step. ``sar.score.token_relevance: false`` leaves out the samples' token relevances
(one similarity per token of every sample, the bulk of the work on long samples), and with them
``sar``.

Where the inputs differ from lm-polygraph's, by construction: lm-polygraph reads the generating
model's sampling log-probabilities (its ``sample_log_probs`` include the end-of-sequence token's,
which a teacher-forced text has not); it removes a token by decoding the others, hallulab by
cutting the token's characters out of the text (:mod:`hallulab.methods.sar.relevance`). The
formulas downstream of the log-probabilities and similarities are lm-polygraph's, operation for
operation (tests/test_reference_parity_sar_cocoa.py).
"""

from hallulab.methods.sample_selection import SAMPLE_CHOICE_PARAMS
from hallulab.methods.sar.raw import SarScores
from hallulab.pipeline.spec import SAMPLES, TEXT_LOGPROBS, KnobSection, MethodSpec, StepInputs, unplanned

SPEC = MethodSpec(
    name="sar",
    title="SAR: shifting attention to relevance (TokenSAR, SentenceSAR, SAR)",
    paper="Duan et al., ACL 2024 (lm-polygraph's TokenSAR, SentenceSAR, SAR)",
    section="§4: token-level and sentence-level shifting",
    level="response",
    requires=("response_tokens",),
    raw=SarScores,
    score=StepInputs(params=("sar.score", "sentence_similarity"), llm_roles=("proxy",)),
    aggregate=StepInputs(params=("sar.aggregate", *SAMPLE_CHOICE_PARAMS)),
    order=25,
    benchmark_variants=("sar", "sentence_sar", "token_sar"),  # lm-polygraph's three estimators at t = 0.001
    needs=(SAMPLES, TEXT_LOGPROBS),
    calls=unplanned(
        "one teacher-forced pass per sample through the proxy, and one similarity per token of each sample: "
        "the tokens are the proxy's"
    ),
    knobs=(
        KnobSection("sar.score", "knobs:SarScoreKnobs"),
        KnobSection("sar.aggregate", "knobs:SarKnobs"),
    ),
)
