"""The degree matrix (Lin, Trivedi and Sun, 2023, "Generating with Confidence: Uncertainty
Quantification for Black-box Large Language Models", §3.2, U_Deg; lm-polygraph 0.7.0's
``DegMat``): a response is uncertain when the model's samples are, on average, unlike each other.

    U_Deg = trace(N I - D) / N^2 = sum_a (N - D[a][a]) / N^2,  D[a][a] = sum_b W[a][b]

over the chosen samples' similarity graph W (the diagonal included; §3.1,
:mod:`hallulab.methods.similarity_graph`): ``entail``, the NLI entailment probabilities
symmetrised, (E + E^T) / 2 (lm-polygraph's default); ``contra``, one minus the contradiction
probabilities symmetrised; ``jaccard``, the Jaccard similarity of the samples' word sets. One
variant per similarity, ``degmat_<similarity>``; higher means more likely hallucinated. No score
step: the NLI probabilities come from the ``nli_pair_matrix`` artifact, N and the choice of
samples from ``samples``. A record with fewer than two chosen samples is not scored (counted).
"""

from hallulab.methods.sample_selection import SAMPLE_CHOICE_PARAMS
from hallulab.pipeline.spec import SAMPLES, KnobSection, MethodSpec, StepInputs

SPEC = MethodSpec(
    name="deg_mat",
    title="Degree matrix (similarity graph of the samples)",
    paper="Lin, Trivedi and Sun, 2023 (lm-polygraph's DegMat)",
    section="§3.2, U_Deg",
    level="response",
    requires=("nli_pair_matrix",),
    score=None,
    aggregate=StepInputs(params=("deg_mat", *SAMPLE_CHOICE_PARAMS)),
    order=23,
    benchmark_variants=("degmat_entail",),  # lm-polygraph's default similarity
    needs=(SAMPLES,),
    knobs=(KnobSection("deg_mat", "knobs:DegMatKnobs"),),
)
