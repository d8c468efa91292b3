"""Eccentricity (Lin, Trivedi and Sun, 2023, "Generating with Confidence: Uncertainty
Quantification for Black-box Large Language Models", §3.2, U_Ecc; lm-polygraph 0.7.0's
``Eccentricity``): a response is uncertain when the spectral embeddings of the model's samples
lie far from their centre.

With L = I - D^{-1/2} W D^{-1/2} the symmetric normalised Laplacian of the chosen samples'
similarity graph W (§3.1, :mod:`hallulab.methods.similarity_graph`) and u_1..u_k its
eigenvectors whose eigenvalue is below ``threshold`` (lm-polygraph 0.7.0's rule for the
"smallest" eigenvectors, 0.9 by default), sample a's embedding is v_a = (u_1[a], ..., u_k[a]) and

    U_Ecc = || [v_1 - v_bar, ..., v_N - v_bar] ||_F = sqrt(sum_k ||u_k - mean(u_k)||^2).

W is one of: ``entail``, the NLI entailment probabilities symmetrised, (E + E^T) / 2
(lm-polygraph's default); ``contra``, one minus the contradiction probabilities symmetrised;
``jaccard``, the Jaccard similarity of the samples' word sets. One variant per similarity,
``ecc_<similarity>``; higher means more likely hallucinated. No score step: the NLI probabilities
come from the ``nli_pair_matrix`` artifact, N and the choice of samples from ``samples``. A
record with fewer than two chosen samples is not scored (counted).
"""

from hallulab.methods.sample_selection import SAMPLE_CHOICE_PARAMS
from hallulab.pipeline.spec import SAMPLES, KnobSection, MethodSpec, StepInputs

SPEC = MethodSpec(
    name="eccentricity",
    title="Eccentricity (spectral embeddings of the samples)",
    paper="Lin, Trivedi and Sun, 2023 (lm-polygraph's Eccentricity)",
    section="§3.2, U_Ecc",
    level="response",
    requires=("nli_pair_matrix",),
    score=None,
    aggregate=StepInputs(params=("eccentricity", *SAMPLE_CHOICE_PARAMS)),
    order=24,
    benchmark_variants=("ecc_entail",),  # lm-polygraph's default similarity
    needs=(SAMPLES,),
    knobs=(KnobSection("eccentricity", "knobs:EccentricityKnobs"),),
)
