"""FactSelfCheck (Sawczyn et al., "FactSelfCheck: Fact-Level Black-Box Hallucination Detection
for LLMs", §3-4; Tables 1, 3, 5, 6, 8, 9).

Facts are the triples of the response's knowledge graph (the shared ``knowledge_graphs``
artifact, KG_u per sentence and KG_s per sample). Fact scores (higher = more likely
hallucinated):

    KG-frequency:  H(f) = 1 - (1/|S|) sum_s I{f in KG_s}                                  (Eq. 7)
    KG-LLM:        H(f) = (1/|V_f|) sum_{s in V_f} Psi(f, KG_s)                             (Eq. 8)
    Text-LLM:      H(f) = (1/|V_f|) sum_{s in V_f} Psi(f, s)                                 (Eq. 10)

with Psi = 0 when the ``evaluator`` LLM role answers yes, 1 when it answers no (Eq. 9), and
V_f the samples with a valid answer (the reply's words are searched for "yes", then "no",
as the released code does; a reply with neither is left out of the mean and counted). A
sentence's score is the max or the mean of its facts' scores (Eq. 11); a sentence without a
fact scores 0.5 (§4.3). ``score`` stores the LLM's answer for every (fact, sample), so N,
the aggregation and the variant are cheap downstream knobs; it asks only on the records the
``llm_records`` knob selects (the LLM variants cost |KG_p| x |S| calls per passage).
RandomFact (Table 1): a seeded random score per fact, aggregated by the mean.
``fsc_kg_llm_pno`` / ``fsc_text_pno`` (this project's addition, white-box evaluators): Psi
replaced by P(No) / (P(Yes) + P(No)) of the first reply token, the reading that needs no
reply format.
"""

from hallulab.methods.factselfcheck.raw import FactSelfCheckScores
from hallulab.methods.sample_selection import SAMPLE_CHOICE_PARAMS
from hallulab.pipeline.spec import SAMPLES, KnobSection, MethodSpec, RoleCheck, StepInputs, unplanned

SPEC = MethodSpec(
    raw=FactSelfCheckScores,
    name="factselfcheck",
    title="FactSelfCheck (knowledge-graph facts)",
    paper="Sawczyn et al., 2025 (FactSelfCheck)",
    section="§3, Eq. 7-11; Tables 1, 6, 8, 9",
    level="fact",
    requires=("knowledge_graphs", "sentences"),
    score=StepInputs(
        params=("factselfcheck.score",),
        llm_roles=("evaluator",),
        prompts=("factselfcheck.kg_prompt", "factselfcheck.text_prompt"),
    ),
    aggregate=StepInputs(params=("factselfcheck.aggregate", *SAMPLE_CHOICE_PARAMS)),
    paper_table="fsc-table1",
    order=80,
    # §4's KG-frequency and KG-LLM sentence scores (the max over the sentence's facts)
    benchmark_variants=("fsc_kg_freq_max", "fsc_kg_llm_max"),
    needs=(SAMPLES,),
    other_levels=("claim", "sentence", "response"),
    calls=unplanned("its triples come from an LLM's extraction of each sample"),
    shards=True,
    corrects_facts=True,
    knobs=(
        KnobSection("factselfcheck.score", "knobs:FactSelfCheckScoreKnobs"),
        KnobSection("factselfcheck.aggregate", "knobs:FactSelfCheckKnobs"),
    ),
    # KG-LLM reads the evaluator's answer per (fact, sample); KG-frequency calls no LLM
    role_checks=(
        RoleCheck(
            role="evaluator",
            label="answers with Yes or No",
            succeeded="kg_answers - kg_answers_invalid",
            of="kg_answers",
            failed="answers had neither Yes nor No",
            variants=("fsc_kg_llm_max",),
        ),
    ),
)
