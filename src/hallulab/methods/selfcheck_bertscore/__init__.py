"""SelfCheckGPT with BERTScore (Manakul et al., 2023, §5.1, Eq. 2).

``score`` stores, for every sentence r_i and stored sample S_n, 1 - max_k F1(r_i, s_k^n)
over the sample's sentences (:mod:`hallulab.methods.bertscore`);
``aggregate`` averages over the chosen N samples.
"""

from hallulab.methods.sample_scores import SampleMatrixScores
from hallulab.methods.sample_selection import SELECTION_PARAMS
from hallulab.pipeline.spec import NO_MODEL_CALLS, SAMPLES, MethodSpec, StepInputs

SPEC = MethodSpec(
    name="selfcheck_bertscore",
    title="SelfCheckGPT BERTScore",
    paper="Manakul et al., 2023 (SelfCheckGPT)",
    section="§5.1, Eq. 2; Table 2",
    level="sentence",
    raw=SampleMatrixScores,
    score=StepInputs(params=("bertscore", "spacy")),
    aggregate=StepInputs(params=SELECTION_PARAMS),
    sample_curve=True,
    paper_table="table2-bertscore",
    order=30,
    benchmark_variants=("bertscore",),  # §5.1
    needs=(SAMPLES,),
    other_levels=("response",),
    calls=NO_MODEL_CALLS,
)
