"""SelfCheckGPT with LLM prompting (Manakul et al., 2023, §5.5).

``score`` asks the ``evaluator`` LLM role, for every sentence and stored sample, whether the
sample supports the sentence (prompt file ``conf/prompts/<selfcheck_prompt.prompt>.yaml``)
and stores two I x N_max matrices: the parsed verdicts (Yes 0, No 1, other 0.5: variant
``prompt``) and, with a white-box backend, P(No) / (P(Yes) + P(No)) of the first reply
token (variant ``prompt_pno``, the reading that needs no reply format).
"""

from hallulab.methods.sample_scores import SampleMatrixScores
from hallulab.methods.sample_selection import SELECTION_PARAMS
from hallulab.pipeline.spec import (
    LLM_VERDICT_PER_SENTENCE_SAMPLE,
    SAMPLES,
    AnswerSpread,
    KnobSection,
    MethodSpec,
    RoleCheck,
    StepInputs,
)

SPEC = MethodSpec(
    name="selfcheck_prompt",
    title="SelfCheckGPT Prompt",
    paper="Manakul et al., 2023 (SelfCheckGPT)",
    section="§5.5; Table 2",
    level="sentence",
    raw=SampleMatrixScores,
    score=StepInputs(
        params=("selfcheck_prompt.max_new_tokens", "selfcheck_prompt.top_k"),
        llm_roles=("evaluator",),
        prompts=("selfcheck_prompt.prompt",),
    ),
    aggregate=StepInputs(params=SELECTION_PARAMS),
    sample_curve=True,
    paper_table="table2-prompt",
    order=40,
    benchmark_variants=("prompt", "prompt_pno"),  # §5.5 with its Yes/No/N-A mapping; the format-free P(No)
    needs=(SAMPLES,),
    other_levels=("response",),
    calls=LLM_VERDICT_PER_SENTENCE_SAMPLE,
    shards=True,
    knobs=(KnobSection("selfcheck_prompt", "knobs:SelfCheckPromptKnobs"),),
    # the parsed verdict (``prompt``) reads the reply; ``prompt_pno`` reads the first token's
    # probabilities, whatever the reply says
    role_checks=(
        RoleCheck(
            role="evaluator",
            label="replies parsed as Yes or No",
            succeeded="verdicts.replies - verdicts.other",
            of="verdicts.replies",
            failed="replies could not be parsed as Yes or No",
            variants=("prompt",),
        ),
        AnswerSpread(
            role="evaluator",
            answers=(("Yes", "verdicts.yes"), ("No", "verdicts.no")),
            of="verdicts.replies",
            noun="pairs",
            variants=("prompt",),
        ),
    ),
)
