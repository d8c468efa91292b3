"""SelfCheckGPT with question answering, MQAG (Manakul et al., 2023, §5.2 and Appendix B).

``score`` generates questions for every sentence (G1, G2) and answers them (A) and judges
them answerable (U) against the response and every stored sample; ``aggregate`` applies the
scoring rules (counting, Bayes, Bayes + alpha), beta1 / beta2, AT and N
(:mod:`hallulab.methods.selfcheck_mqag.scoring` gives the formulas; the roles are in
:mod:`hallulab.methods.selfcheck_mqag.roles`).
"""

from hallulab.methods.sample_selection import SELECTION_PARAMS
from hallulab.methods.selfcheck_mqag.raw import StoredMQAG
from hallulab.pipeline.spec import SAMPLES, KnobSection, MethodSpec, RoleCheck, StepInputs, unplanned

SPEC = MethodSpec(
    name="selfcheck_mqag",
    title="SelfCheckGPT QA (MQAG)",
    paper="Manakul et al., 2023 (SelfCheckGPT)",
    section="§5.2, App. B; Tables 2 and 5",
    level="sentence",
    raw=StoredMQAG,
    score=StepInputs(
        params=("selfcheck_mqag.roles", "selfcheck_mqag.hub", "selfcheck_mqag.score"),
        llm_roles=("qa",),
        prompts=(
            "selfcheck_mqag.prompts.g1",
            "selfcheck_mqag.prompts.g2",
            "selfcheck_mqag.prompts.answer",
            "selfcheck_mqag.prompts.answerability",
        ),
    ),
    aggregate=StepInputs(params=("selfcheck_mqag.aggregate", *SELECTION_PARAMS)),
    paper_table="table5",
    order=50,
    benchmark_variants=("mqag_bayes_with_alpha",),  # Table 2's MQAG row, Bayes with alpha
    needs=(SAMPLES,),
    other_levels=("response",),
    calls=unplanned("its questions and answers come from earlier replies"),
    knobs=(
        KnobSection("selfcheck_mqag.score", "knobs:MQAGQuestionKnobs"),
        KnobSection("selfcheck_mqag.hub", "knobs:MQAGHubKnobs"),
        KnobSection("selfcheck_mqag.aggregate", "knobs:MQAGScoringKnobs"),
    ),
    # G1 writes a question and its answer for a sentence, G2 three wrong options for it
    role_checks=(
        RoleCheck(
            role="qa",
            label="generated questions parsed",
            succeeded="g1_replies - g1_unparsed_skipped",
            of="g1_replies",
            failed="generated questions could not be parsed",
        ),
        RoleCheck(
            role="qa",
            label="parsed questions with three wrong options",
            succeeded="questions_valid - g2_padded_options",
            of="questions_valid",
            failed="parsed questions got fewer than three wrong options (padded with a repeated one)",
        ),
    ),
)
