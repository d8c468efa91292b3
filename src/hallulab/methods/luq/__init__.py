"""LUQ, Long-text Uncertainty Quantification (Zhang, Liu, Basaldella and Collier, EMNLP 2024,
"LUQ: Long-text Uncertainty Quantification for LLMs"; lm-polygraph 0.7.0's ``LUQ``): a long
response is uncertain where the model's other samples do not support its sentences.

The support of a text h by a sample r is the NLI model's entailment against its contradiction,
the neutral class left out, with r the premise and h the hypothesis:

    S(h, r) = exp(z_e) / (exp(z_e) + exp(z_c))

Two readings, each a variant:

* ``luq_sentence``, the paper's: for sentence s_i of the response and the N chosen samples r_n,

      u_i = 1 - (1/N) sum_n S(s_i, r_n)

  at the sentence level, and at the response level their mean, 1 - C(x, r) = (1/I) sum_i u_i,
  the paper's confidence in the response, read as an uncertainty (its question-level
  U(x) = 1 - mean_i C(x, r_i) averages this over every sampled response; the response here is
  the one the data set labels). On WikiBio and FactualBio the sentences are the data set's.
  1 - S is SelfCheckGPT-NLI's P(contradict) (Manakul et al., 2023, Eq. 9) of the same pair, so
  u_i is SelfCheckGPT-NLI's sentence score with the sample as the premise: the score step
  stores the I x N_max matrix of 1 - S through the same cached NLI request, and with
  ``nli.pair_order=sample_first`` it reuses SelfCheckGPT-NLI's pairs and the two variants
  coincide; SelfCheckGPT's released code (the project's default order) puts the sentence
  first, a different NLI question (:mod:`.score`).
* ``luq_response``, lm-polygraph's, no sentence splitting: over the N chosen samples only,
  U = 1 - (1/N) sum_a (1/(N-1)) sum_{b != a} S(r_b, r_a), from the ``nli_pair_matrix``
  artifact's probabilities (S = p_e / (p_e + p_c), the softmax's normaliser cancelling), one
  score per response.

Higher means more likely hallucinated. The paper's LUQ-Atomic (atomic facts for sentences) and
LUQ-Pair (each sentence against each sample sentence) are not implemented. The paper is not
kept with the project: the formulas above follow its description of LUQ (sentence-level NLI
consistency, entailment normalised against contradiction) and lm-polygraph's implementation.
N and the choice of samples come from ``samples``: a sweep over them calls no model.
"""

from hallulab.methods.sample_scores import SampleMatrixScores
from hallulab.methods.sample_selection import SAMPLE_CHOICE_PARAMS
from hallulab.pipeline.spec import NLI_PER_SENTENCE_SAMPLE, SAMPLES, KnobSection, MethodSpec, StepInputs

SPEC = MethodSpec(
    name="luq",
    title="LUQ (NLI support by the samples)",
    paper="Zhang, Liu, Basaldella and Collier, EMNLP 2024 (lm-polygraph's LUQ)",
    section="LUQ: sentence-level NLI support",
    level="sentence",
    requires=("nli_pair_matrix",),
    raw=SampleMatrixScores,
    score=StepInputs(params=("nli",), files=("${nli.depends_on}",)),
    aggregate=StepInputs(params=("luq", *SAMPLE_CHOICE_PARAMS)),
    order=28,
    # the paper's sentence reading and lm-polygraph's response reading
    benchmark_variants=("luq_sentence", "luq_response"),
    variant_levels=(("luq_response", ("response",)),),  # the response reading scores no sentence
    needs=(SAMPLES,),
    other_levels=("response",),
    calls=NLI_PER_SENTENCE_SAMPLE,
    shards=True,
    knobs=(KnobSection("luq", "knobs:LUQKnobs"),),
)
