"""SelfCheckGPT with n-gram (Manakul et al., 2023, §5.3, Eq. 7-8; Tables 2 and 7).

``score``: spaCy sentences and tokens of every response and sample (the expensive part;
no sweep knob). ``aggregate``: n-gram counts and the Avg / Max scores for every n, N and
aggregation (:mod:`hallulab.methods.selfcheck_ngram.ngram` gives the formulas).
"""

from hallulab.methods.sample_selection import SAMPLE_CHOICE_PARAMS
from hallulab.methods.selfcheck_ngram.raw import NgramScores
from hallulab.pipeline.spec import NO_MODEL_CALLS, SAMPLES, KnobSection, MethodSpec, StepInputs

SPEC = MethodSpec(
    raw=NgramScores,
    name="selfcheck_ngram",
    title="SelfCheckGPT n-gram",
    paper="Manakul et al., 2023 (SelfCheckGPT)",
    section="§5.3, Eq. 7-8; Tables 2 and 7",
    level="sentence",
    score=StepInputs(params=("spacy", "selfcheck_ngram.response_split")),
    aggregate=StepInputs(
        params=(
            "selfcheck_ngram.n",
            "selfcheck_ngram.aggregations",
            "selfcheck_ngram.lowercase",
            "selfcheck_ngram.smoothing_k",
            *SAMPLE_CHOICE_PARAMS,
        )
    ),
    paper_table="table7",
    order=10,
    benchmark_variants=("ngram_n1_max",),  # Table 2's best n-gram row, Unigram (max)
    needs=(SAMPLES,),
    other_levels=("response",),
    calls=NO_MODEL_CALLS,
    knobs=(KnobSection("selfcheck_ngram", "knobs:NgramKnobs", elsewhere=("response_split",)),),
)
