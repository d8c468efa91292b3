"""Semantic Entropy (Kuhn et al., 2023, "Semantic Uncertainty", §3; Farquhar et al., 2024,
Nature, "Detecting hallucinations in large language models using semantic entropy"): a
response is uncertain when the model's sampled answers to the same question mean different
things, not merely say them differently. Two readings:

**lm-polygraph's** (``se_sum``, ``se_frequency``), as lm-polygraph 0.7.0's ``SemanticEntropy``
computes it from the samples' log-probabilities and semantic classes; the equality holds
downstream of those two inputs (tests/test_semantic_entropy.py), which hallulab obtains its own
way (the proxy's teacher-forced log-probabilities, the configured NLI model):

1. **Semantic classes** (Kuhn et al. §3.2, Algorithm 1): the N samples s_1..s_N are clustered
   greedily; s_j joins the first class whose first member it bidirectionally entails (the
   NLI model's argmax is entailment both ways), else opens a new class
   (:mod:`hallulab.methods.semantic_entropy.pairs`).
2. **Class probabilities**: ``sum``, log p(c | x) = logsumexp_{j in c} log p(s_j | x), the
   samples' sequence log-probabilities (sum of token log-probabilities) under the ``proxy``
   LLM, teacher-forced after the question; ``frequency`` (Farquhar et al.'s discrete semantic
   entropy, for black-box models), log p(c | x) = log(n_c / N).
3. **Entropy**, ``mean`` (lm-polygraph's default): SE(x) = -(1/N) sum_j log p(c(s_j) | x), a
   per-sample Monte-Carlo mean; with ``frequency`` this is exactly
   -sum_c (n_c / N) log(n_c / N). ``direct`` (lm-polygraph's other estimator):
   -sum_j p(c(s_j) | x) log p(c(s_j) | x). Neither is Kuhn et al.'s released estimator
   (``get_predictive_entropy_over_concepts``: length-normalised log-likelihoods, the mean over
   classes of log p(c | x)).

**Farquhar et al.'s** (``se_farquhar``), as their released ``compute_uncertainty_measures.py``
and ``semantic_entropy.py`` compute it with their command line's defaults: the NLI model reads
each answer after the question; two answers are one meaning when each entails the other
(``get_semantic_ids`` with ``strict_entailment=True``, which their ``--strict_entailment``
passes by default), an answer equivalent to several leaders joining the last; each answer's
log-likelihood is length-normalised, l_j = log p(s_j | x) / |s_j|; log p(c | x) =
logsumexp_{j in c} l_j - logsumexp_j l_j; SE = -sum_c p(c | x) log p(c | x). The labelled
``se_farquhar_nocontra`` clusters by the looser rule of the function's own default
(``strict_entailment=False``): one meaning unless one answer contradicts the other, and not
when both directions are neutral.

Higher means more likely hallucinated, the positive class of the response-level evaluation.
The expensive step stores the samples' log-probabilities and token counts and the NLI
classes of the sample pairs the greedy classes read (of the answers alone, and of the
question-conditioned answers): a sample is compared with each class's first member only, so
those pairs are scored lazily, in waves of batched requests across the data set
(:mod:`hallulab.methods.semantic_entropy.pairs`), not all N_max (N_max - 1) ordered pairs first.
The classes of the first N samples read a subset of them for every N, so N and the readings are
cheap knobs of the aggregate step; a seeded random choice of samples reads every pair
(``semantic_entropy.score.pairs: all``).

The NLI input of lm-polygraph's reading is each sample alone (its ``semantic_matrix`` reads the
sample texts); ``semantic_entropy.score.nli_input: question_answer`` prefixes the question to
both texts, as Kuhn et al.'s and Farquhar et al.'s released code do.
"""

from hallulab.methods.sample_selection import SAMPLE_CHOICE_PARAMS
from hallulab.methods.semantic_entropy.raw import SemanticEntropyScores
from hallulab.pipeline.spec import SAMPLES, TEXT_LOGPROBS, KnobSection, MethodSpec, StepInputs, unplanned

SPEC = MethodSpec(
    name="semantic_entropy",
    title="Semantic Entropy (bidirectional-entailment classes of the samples)",
    paper="Kuhn et al., 2023; Farquhar et al., 2024 (lm-polygraph's SemanticEntropy; Farquhar et al.'s code)",
    section="Kuhn et al. §3, Algorithm 1; Farquhar et al. Methods",
    level="response",
    raw=SemanticEntropyScores,
    score=StepInputs(params=("nli", "semantic_entropy.score"), llm_roles=("proxy",), files=("${nli.depends_on}",)),
    aggregate=StepInputs(params=("semantic_entropy.aggregate", *SAMPLE_CHOICE_PARAMS)),
    order=19,
    # lm-polygraph's estimator and Farquhar et al.'s released reading (their command line's strict rule)
    benchmark_variants=("se_sum", "se_farquhar"),
    needs=(SAMPLES, TEXT_LOGPROBS),
    calls=unplanned("its NLI pairs follow the semantic classes the earlier pairs formed"),
    shards=True,
    knobs=(
        KnobSection("semantic_entropy.score", "knobs:SemanticEntropyScoreKnobs"),
        KnobSection("semantic_entropy.aggregate", "knobs:SemanticEntropyKnobs"),
    ),
)
