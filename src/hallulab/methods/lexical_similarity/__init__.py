"""Lexical Similarity (Fomicheva et al., 2020; the sampling baseline of Kuhn et al., 2023,
§6, and lm-polygraph's ``LexicalSimilarity`` estimator): a response is uncertain when the
model's samples disagree in wording.

    U(x) = -(2 / (N (N - 1))) sum_{i < j} sim(s_i, s_j)

over the N samples, sim being ROUGE-1, ROUGE-2 or ROUGE-L F-measure (lm-polygraph's default:
ROUGE-L, with rouge-score's tokenizer and Porter stemmer). Black-box and cheap: no score
step, no model; it reads the stored samples (N and the choice of samples from ``samples``,
as every method over samples) and scores responses. A record with fewer than two samples is
not scored (counted).
"""

from hallulab.methods.sample_selection import SAMPLE_CHOICE_PARAMS
from hallulab.pipeline.spec import SAMPLES, KnobSection, MethodSpec, StepInputs

SPEC = MethodSpec(
    name="lexical_similarity",
    title="Lexical Similarity (ROUGE between samples)",
    paper="Fomicheva et al., 2020; Kuhn et al., 2023 (lm-polygraph's LexicalSimilarity)",
    section="Kuhn et al. §6 baselines",
    level="response",
    score=None,
    aggregate=StepInputs(params=("lexical_similarity", *SAMPLE_CHOICE_PARAMS)),
    order=18,
    benchmark_variants=("lexsim_rougeL",),  # lm-polygraph's default similarity, ROUGE-L
    needs=(SAMPLES,),
    knobs=(KnobSection("lexical_similarity", "knobs:LexicalSimilarityKnobs"),),
)
