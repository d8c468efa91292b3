"""Grey-box baselines from token probabilities (SelfCheckGPT §4 / §7.1, Tables 2 and 8):
Avg / Max of -log p and of the entropy H over each sentence's tokens.

No expensive step of its own: it reads the shared ``response_tokens`` (token statistics from
the generating model or a proxy LLM) and ``sentences`` (spans) artifacts.
"""

from hallulab.pipeline.spec import TEXT_LOGPROBS, MethodSpec, StepInputs

SPEC = MethodSpec(
    name="greybox",
    title="Grey-box baselines (token probabilities)",
    paper="Manakul et al., 2023 (SelfCheckGPT)",
    section="§4, §7.1; Tables 2 and 8",
    level="sentence",
    requires=("sentences", "response_tokens"),
    score=None,
    aggregate=StepInputs(),
    paper_table="table8-opt-125m",
    order=15,
    benchmark_variants=("max_neglogp", "max_entropy"),  # SelfCheckGPT Table 2's grey-box rows by the max over tokens
    needs=(TEXT_LOGPROBS,),
    other_levels=("response",),
)
