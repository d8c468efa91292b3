"""Kernel Language Entropy (Nikitin, Kossen, Gal and Marttinen, NeurIPS 2024, "Kernel Language
Entropy: Fine-grained Uncertainty Quantification for LLMs from Semantic Similarities", §3;
lm-polygraph 0.7.0's ``KernelLanguageEntropy``): the von Neumann entropy of a positive
semi-definite kernel over the model's samples, built from their NLI similarity graph, so that
samples of close meanings count as partly the same meaning rather than as one class or two.

For the N chosen samples, with p(a, b) the NLI probabilities of (entailment, neutral,
contradiction) for premise a and hypothesis b and w = (1, 1/2, 0):

    W[a][b] = w . p(a, b) + w . p(b, a)   (a != b; no self-loops)
    L       = D - W,  D = diag(sum_b W[a][b])
    K       = exp(-t L)                                  heat kernel, t = 0.3
              (2 nu / kappa^2 I + L)^{-nu}               Matérn kernel, kappa = nu = 1
    rho     = K[a][b] / (sqrt K[a][a] sqrt K[b][b]) / N  unit trace (1e-12 added to each root)
    KLE     = VNE(rho) = -Tr(rho log rho) = -sum_k mu_k log mu_k,   divided by log N (scaled)

over the eigenvalues mu_k of rho above 1e-8.

One variant per kernel, ``kle_heat`` (lm-polygraph's estimator, the defaults above: its t,
its probability weights, the combinatorial Laplacian, scaled, no jitter) and ``kle_matern``;
higher means more likely hallucinated. The paper's other cheap options are settings: one-hot
NLI classes as the weights (``weights: classes``, the authors' released weighted graph), the
normalised Laplacian D^{-1/2} L D^{-1/2} (``laplacian: normalised``), t, kappa, nu, the scaling
and a jitter added to rho's diagonal (:mod:`.kernel` has every step). Not implemented: KLE-c,
the kernel mixed with semantic entropy's cluster probabilities, which needs the samples'
sequence likelihoods. No score step: the NLI probabilities come from the ``nli_pair_matrix``
artifact, N and the choice of samples from ``samples``, so a sweep over either calls no model.
A record with fewer than two chosen samples is not scored (counted).
"""

from hallulab.methods.sample_selection import SAMPLE_CHOICE_PARAMS
from hallulab.pipeline.spec import SAMPLES, KnobSection, MethodSpec, StepInputs

SPEC = MethodSpec(
    name="kernel_language_entropy",
    title="Kernel Language Entropy (semantic kernel of the samples)",
    paper="Nikitin, Kossen, Gal and Marttinen, NeurIPS 2024 (lm-polygraph's KernelLanguageEntropy)",
    section="§3, KLE with the heat and Matérn kernels",
    level="response",
    requires=("nli_pair_matrix",),
    score=None,
    aggregate=StepInputs(params=("kernel_language_entropy", *SAMPLE_CHOICE_PARAMS)),
    order=27,
    benchmark_variants=("kle_heat",),  # lm-polygraph's estimator and defaults
    needs=(SAMPLES,),
    knobs=(KnobSection("kernel_language_entropy", "knobs:KernelLanguageEntropyKnobs"),),
)
