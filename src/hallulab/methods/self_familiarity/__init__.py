"""Self-Familiarity (Luo et al., 2023; §3, Eq. 1-7; Tables 2-4): refuse an instruction before
answering when the model is unfamiliar with its concepts.

For each concept of the instruction (the shared ``concepts`` artifact: extracted, grouped,
filtered, ranked by the frequency score of Eq. 6), the ``generator`` LLM explains the concept
greedily (Eq. 2; l_F = 100 new tokens, the released code's, where Appendix D says 200); every
word of the concept is masked with "..." in all case forms over the whole inference prompt
(Eq. 3, as the released code masks); the model is asked what the masked explanation is
related to, and constrained beam search (T_B = 30 beams, answers of l_B = 15 tokens plus one
per constraint string that must name the concept in one of its case forms) gives the
familiarity s_i = exp(sum / (P + L)) of the best answer, P being the prompt's length as the
released code built it (BOS + ``USER: … ASSISTANT:``) (Eq. 4-5). The instruction's
familiarity is the weighted mean with geometric weights r^-rank over the concepts ranked
rarest first (Eq. 7, r = 2); the model refuses when it falls below a threshold h set on the
basic concepts (Appendix D: the midpoint of the BCa bootstrap interval of their 5th
percentile). Scores are stored as hallucination scores (1 - s_f: higher = refuse), so every
method shares one direction.

Table 2's baselines are variants of this method, thresholded the same way: Greedy-Perplexity,
-AvgLogP, -MinLogP (the greedy response's token statistics), Sample-BERTScore and
Sample-SentenceScore (T_s = 10 samples), Forward-Inference and Forward-Self (the probability
of a "Yes" reply, Eq. 23 and 26, plus the format-free P(Yes) / (P(Yes) + P(No)) of the first
reply token), and Self-Detection (Zhao et al., 2023: the entropy of the answers to T_s
rephrasings, clustered by semantic equivalence; ``self_detection.py``).
"""

from hallulab.methods.self_familiarity.raw import SelfFamiliarityScores
from hallulab.methods.self_familiarity.unit_texts import UNIT_TEXTS
from hallulab.pipeline.spec import PROMPTS, TEXT_LOGPROBS, KnobSection, MethodSpec, StepInputs, unplanned

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
    benchmark_variants=("selffam",),  # Eq. 6-7's familiarity score
    needs=(PROMPTS, TEXT_LOGPROBS),
    calls=unplanned("its explanations and concept checks come from earlier replies"),
    units=UNIT_TEXTS,  # each prompt's concepts: masked inference prompt and best guess
    knobs=(
        KnobSection("self_familiarity.score", "knobs:SelfFamiliarityScoreKnobs"),
        KnobSection("self_familiarity.aggregate", "knobs:SelfFamiliarityKnobs"),
        KnobSection("self_familiarity.threshold", "knobs:ThresholdKnobs"),
    ),
)
