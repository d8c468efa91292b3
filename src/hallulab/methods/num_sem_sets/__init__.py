"""Number of Semantic Sets (Lin, Trivedi and Sun, 2023, "Generating with Confidence: Uncertainty
Quantification for Black-box Large Language Models", §3.2, U_NumSet; lm-polygraph 0.7.0's
``NumSemSets``): a response is uncertain when the model's samples fall into many sets of one
meaning.

Two of the N chosen samples are joined when each entails the other more than it contradicts it,

    E[a][b] > C[a][b]  and  E[b][a] > C[b][a],

E and C the NLI entailment and contradiction probabilities of the ordered pair (premise s_a,
hypothesis s_b) from the ``nli_pair_matrix`` artifact; U_NumSet is the number of connected
components of that graph, from 1 (one meaning) to N. Higher means more likely hallucinated. No
score step: N and the choice of samples come from ``samples``, so a sweep over them calls no
model. A record with fewer than two chosen samples is not scored (counted).
"""

from hallulab.methods.sample_selection import SAMPLE_CHOICE_PARAMS
from hallulab.pipeline.spec import SAMPLES, MethodSpec, StepInputs

SPEC = MethodSpec(
    name="num_sem_sets",
    title="Number of Semantic Sets (NLI graph of the samples)",
    paper="Lin, Trivedi and Sun, 2023 (lm-polygraph's NumSemSets)",
    section="§3.2, U_NumSet",
    level="response",
    requires=("nli_pair_matrix",),
    score=None,
    aggregate=StepInputs(params=SAMPLE_CHOICE_PARAMS),
    order=21,
    needs=(SAMPLES,),
)
