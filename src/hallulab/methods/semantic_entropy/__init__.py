"""Semantic Entropy (Kuhn et al., 2023, "Semantic Uncertainty", §3; Farquhar et al., 2024,
Nature, "Detecting hallucinations in large language models using semantic entropy"): a
response is uncertain when the model's sampled answers to the same question mean different
things, not merely say them differently.

1. **Semantic classes** (Kuhn et al. §3.2, Algorithm 1): the N samples s_1..s_N are clustered
   greedily; s_j joins the first class whose first member it bidirectionally entails (the
   NLI model's argmax is entailment both ways), else opens a new class
   (:mod:`hallulab.text.semantic_classes`).
2. **Class probabilities**, two readings:

   * ``sum`` (Kuhn et al. §3.3): log p(c | x) = logsumexp_{j in c} log p(s_j | x), the
     samples' sequence log-probabilities (sum of token log-probabilities) under the
     ``proxy`` LLM, teacher-forced after the question;
   * ``frequency`` (Farquhar et al.'s discrete semantic entropy, for black-box models):
     log p(c | x) = log(n_c / N).

3. **Entropy**, ``mean`` (Kuhn et al.'s Monte-Carlo estimate as lm-polygraph 0.7.0's
   ``SemanticEntropy`` computes it, the default): SE(x) = -(1/N) sum_j log p(c(s_j) | x); with
   ``frequency`` this is exactly -sum_c (n_c / N) log(n_c / N). ``direct`` (lm-polygraph's other
   estimator): -sum_j p(c(s_j) | x) log p(c(s_j) | x).

Variants ``se_<class probability>`` (``se_sum``, ``se_frequency``); higher means more likely
hallucinated, the positive class of the response-level evaluation. The expensive step stores
the samples' log-probabilities and the N_max x N_max NLI classes; N, the choice of samples and
the two readings are cheap knobs of the aggregate step.

The NLI input is each sample alone (lm-polygraph's ``semantic_matrix`` reads the sample texts);
``semantic_entropy.score.nli_input: question_answer`` prefixes the question to both texts, as
Kuhn et al.'s released code does.
"""

from hallulab.methods.sample_matrix import SAMPLE_CHOICE_PARAMS
from hallulab.methods.semantic_entropy.raw import SemanticEntropyScores
from hallulab.pipeline.spec import SAMPLES, TEXT_LOGPROBS, MethodSpec, StepInputs, unplanned

SPEC = MethodSpec(
    name="semantic_entropy",
    title="Semantic Entropy (bidirectional-entailment classes of the samples)",
    paper="Kuhn et al., 2023; Farquhar et al., 2024 (lm-polygraph's SemanticEntropy)",
    section="Kuhn et al. §3, Algorithm 1; Farquhar et al. Methods",
    level="response",
    raw=SemanticEntropyScores,
    score=StepInputs(params=("nli", "semantic_entropy.score"), llm_roles=("proxy",), files=("${nli.depends_on}",)),
    aggregate=StepInputs(params=("semantic_entropy.aggregate", *SAMPLE_CHOICE_PARAMS)),
    order=19,
    needs=(SAMPLES, TEXT_LOGPROBS),
    calls=unplanned("its NLI pairs follow the semantic classes the earlier pairs formed"),
    shards=True,
)
