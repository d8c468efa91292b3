"""Sum of the eigenvalues of the graph Laplacian (Lin, Trivedi and Sun, 2023, "Generating with
Confidence: Uncertainty Quantification for Black-box Large Language Models", §3.2, U_EigV;
lm-polygraph 0.7.0's ``EigValLaplacian``): a continuous count of the semantic sets of the
model's samples.

    U_EigV = sum_{k=1}^{N} max(0, 1 - lambda_k)

over the eigenvalues lambda_k of the symmetric normalised Laplacian L = I - D^{-1/2} W D^{-1/2}
of the chosen samples' similarity graph W (D = diag of W's row sums), W one of
(:mod:`hallulab.methods.similarity_graph`, §3.1): ``entail``, the NLI entailment probabilities
symmetrised, (E + E^T) / 2 (lm-polygraph's default); ``contra``, one minus the contradiction
probabilities symmetrised; ``jaccard``, the Jaccard similarity of the samples' word sets. One
variant per similarity, ``eigv_<similarity>``; higher means more likely hallucinated. No score
step: the NLI probabilities come from the ``nli_pair_matrix`` artifact, N and the choice of
samples from ``samples``. A record with fewer than two chosen samples is not scored (counted).
"""

from hallulab.methods.sample_selection import SAMPLE_CHOICE_PARAMS
from hallulab.pipeline.spec import SAMPLES, KnobSection, MethodSpec, StepInputs

SPEC = MethodSpec(
    name="eig_val_laplacian",
    title="Sum of Laplacian eigenvalues (similarity graph of the samples)",
    paper="Lin, Trivedi and Sun, 2023 (lm-polygraph's EigValLaplacian)",
    section="§3.2, U_EigV",
    level="response",
    requires=("nli_pair_matrix",),
    score=None,
    aggregate=StepInputs(params=("eig_val_laplacian", *SAMPLE_CHOICE_PARAMS)),
    order=22,
    benchmark_variants=("eigv_entail",),  # lm-polygraph's default similarity
    needs=(SAMPLES,),
    knobs=(KnobSection("eig_val_laplacian", "knobs:EigValLaplacianKnobs"),),
)
