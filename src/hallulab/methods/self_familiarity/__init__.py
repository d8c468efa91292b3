"""Self-Familiarity (Luo et al., 2023; §3, Eq. 1-7; Tables 2-4): refuse an instruction before
answering when the model is unfamiliar with its concepts.

For each concept of the instruction (the shared ``concepts`` artifact: extracted, grouped,
filtered, ranked by the frequency score of Eq. 6), the ``generator`` LLM explains the concept
greedily (l_F = 200 tokens, Eq. 2); every concept word is masked in the explanation with
"..." in all case forms (Eq. 3); the model is asked what the masked explanation is related to,
and constrained beam search (T_B = 30 beams, answers of l_B = 15 tokens that must name the
concept in one of its case forms) gives the familiarity s_i = the best answer's probability
(Eq. 4-5). The instruction's familiarity is the weighted mean with geometric weights r^-rank
over the concepts ranked rarest first (Eq. 7, r = 2); the model refuses when it falls below
a threshold h set on the basic concepts (Appendix D). Scores are stored as
hallucination scores (1 - s_f: higher = refuse), so every method shares one direction.

Table 2's baselines are variants of this method, thresholded the same way: Greedy-Perplexity,
-AvgLogP, -MinLogP (the greedy response's token statistics), Sample-BERTScore and
Sample-SentenceScore (T_s = 10 samples), Forward-Inference and Forward-Self (the probability
of a "Yes" reply, Eq. 23 and 26, plus the format-free P(Yes) / (P(Yes) + P(No)) of the first
reply token), and Self-Detection (Zhao et al., 2023: the entropy of the answers to T_s
rephrasings, clustered by semantic equivalence; ``self_detection.py``).
"""

from hallulab.methods.self_familiarity.raw import SelfFamiliarityScores
from hallulab.pipeline.spec import PROMPTS, TEXT_LOGPROBS, MethodSpec, StepInputs, unplanned

SPEC = MethodSpec(
    raw=SelfFamiliarityScores,
    name="self_familiarity",
    title="Self-Familiarity (concept guessing before answering)",
    paper="Luo et al., 2023 (Self-Familiarity)",
    section="§3, Eq. 1-7; Appendix C-D; Tables 2-4",
    level="prompt",
    requires=("concepts", "response_tokens"),
    score=StepInputs(
        params=("self_familiarity.score", "bertscore", "spacy"),
        llm_roles=("generator",),
        prompts=(
            "self_familiarity.explanation_prompt",
            "self_familiarity.inference_prompt",
            "self_familiarity.forward_inference_prompt",
            "self_familiarity.forward_self_prompt",
            "self_familiarity.rephrase_prompt",
        ),
    ),
    aggregate=StepInputs(params=("self_familiarity.aggregate", "self_familiarity.threshold")),
    paper_table="sf-table2",
    order=90,
    needs=(PROMPTS, TEXT_LOGPROBS),
    calls=unplanned("its explanations and concept checks come from earlier replies"),
    raw_unit_texts=True,
)
