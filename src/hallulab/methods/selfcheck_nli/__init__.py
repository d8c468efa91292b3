"""SelfCheckGPT with NLI (Manakul et al., 2023, §5.4, Eq. 9-10).

For sentence r_i of the response and sample S_n, the classifier reads the pair of r_i and
S_n and only the entailment and contradiction logits count:

    P(contradict | r_i, S_n) = exp(z_c) / (exp(z_e) + exp(z_c))            (Eq. 9)
    S_NLI(i) = (1/N) * sum_n P(contradict | r_i, S_n)                      (Eq. 10)

Pair order: the paper's text calls S_n the premise, but the released code (selfcheckgpt
0.1.7, which produced Table 2) tokenises ``(sentence, sample)``, i.e. the sentence first.
``nli.pair_order: sentence_first`` (default) follows the code; ``sample_first`` follows the
paper's wording. The NLI model and its label order come from the shared NLI layer
(:mod:`hallulab.nli.scorer`). ``score`` stores the I x N_max matrix of P(contradict);
``aggregate`` applies N, the sample selection and the aggregation (Eq. 10's mean).
"""

from hallulab.methods.sample_scores import SampleMatrixScores
from hallulab.methods.sample_selection import SELECTION_PARAMS
from hallulab.pipeline.spec import NLI_PER_SENTENCE_SAMPLE, SAMPLES, MethodSpec, StepInputs

SPEC = MethodSpec(
    name="selfcheck_nli",
    title="SelfCheckGPT NLI",
    paper="Manakul et al., 2023 (SelfCheckGPT)",
    section="§5.4, Eq. 9-10; Table 2",
    level="sentence",
    raw=SampleMatrixScores,
    score=StepInputs(params=("nli",), files=("${nli.depends_on}",)),
    aggregate=StepInputs(params=SELECTION_PARAMS),
    sample_curve=True,
    paper_table="table2-nli",
    order=20,
    benchmark_variants=("nli",),  # §5.4, SelfCheckGPT's headline variant
    needs=(SAMPLES,),
    other_levels=("response",),
    calls=NLI_PER_SENTENCE_SAMPLE,
    shards=True,
)
