"""Self-Detection baseline (Zhao et al., 2023, "Knowing What LLMs DO NOT Know: A Simple Yet
Effective Self-Detection Method"), as the Self-Familiarity paper runs it (Luo et al., 2023,
§4.2 and Appendix C.4: T_s rephrased questions, the consistency score; Table 7: 2,000 tokens).

1. **Diversify**: the ``generator`` rephrases the instruction T_s times (one call each, sampled
   at temperature 1 with a per-record, per-index seed).
2. **Answer**: the ``generator`` answers each rephrasing greedily (at most 200 tokens, the
   paper's response limit for every baseline, Appendix D).
3. **Divergence**: the answers are clustered by semantic equivalence; the score is the entropy
   of the cluster sizes, H = -sum_j (n_j / T) log(n_j / T): 0 when every answer agrees, log T
   when none does. Each answer joins the first cluster whose first member it is equivalent to
   (in order), else opens a new one (:mod:`hallulab.text.semantic_classes`, shared with
   Semantic Entropy).

Equivalence: Zhao et al. ask the LLM whether two answers mean the same; hallulab decides it by
the cosine of all-MiniLM-L6-v2 sentence embeddings (mean pooling) >= ``equivalence_threshold``,
a substitute that needs no capable judge (labelled as such in the score output). The
atypicality term of Zhao et al. (the negative log-likelihood of the question) is not part of
the consistency score the Self-Familiarity paper reports, and is not computed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from hallulab.data.schema import Record
from hallulab.generation import sample_seed
from hallulab.llm.base import DecodingParams
from hallulab.methods.self_familiarity.knobs import SelfFamiliarityScoreKnobs
from hallulab.methods.self_familiarity.raw import SelfDetection
from hallulab.methods.self_familiarity.similarity import embed_groups
from hallulab.pipeline.context import BuildContext
from hallulab.text.semantic_classes import cluster_by_similarity, cluster_entropy

EQUIVALENCE = "cosine of all-MiniLM-L6-v2 sentence embeddings (substitute for the LLM equivalence check of Zhao et al.)"


def _rephrasings(
    ctx: BuildContext, knobs: SelfFamiliarityScoreKnobs, records: Sequence[Record]
) -> dict[str, list[str]]:
    template = ctx.resources.prompt("self_familiarity.rephrase_prompt")
    llm = ctx.resources.llm("generator")
    params = DecodingParams(max_new_tokens=knobs.rephrase_tokens, temperature=knobs.rephrase_temperature)
    prompts, seeds = [], []
    for record in records:
        for k in range(knobs.baseline_samples):
            prompts.append(template.messages(instruction=record.prompt or ""))
            seeds.append(sample_seed(knobs.rephrase_seed, f"self_detection:{record.id}", k))
    replies = llm.generate(prompts, params, seeds) if prompts else []
    size = knobs.baseline_samples
    return {p.id: [first_line(r.text) for r in replies[i * size : (i + 1) * size]] for i, p in enumerate(records)}


LABELS = ("rephras", "paraphras", "instruction", "question", "new instruction")


def first_line(reply: str) -> str:
    """The rephrased instruction: the first non-empty line, without quotes or a leading label
    ("Rephrased instruction:", "Question:", ...)."""
    for line in reply.splitlines():
        text = line.strip().strip('"').strip()
        label, colon, rest = text.partition(":")
        if colon and len(label.split()) <= 3 and label.lower().strip().startswith(LABELS):
            text = rest.strip().strip('"').strip()
        if text:
            return text
    return ""


def self_detection(
    ctx: BuildContext, knobs: SelfFamiliarityScoreKnobs, records: Sequence[Record], counts: Counter[str]
) -> dict[str, SelfDetection]:
    """record id -> {"rephrasings", "answers", "clusters", "entropy"} (entropy None: < 2 answers)."""
    asked = [p for p in records if p.prompt]
    rephrased = _rephrasings(ctx, knobs, asked)
    llm = ctx.resources.llm("generator")
    questions: list[tuple[str, str]] = []  # (record id, rephrased question)
    for record in asked:
        for text in rephrased[record.id]:
            if text:
                questions.append((record.id, text))
            else:
                counts["self_detection_empty_rephrasings"] += 1
    replies = llm.generate([q for _, q in questions], DecodingParams(max_new_tokens=knobs.self_detection_answer_tokens))
    answers: dict[str, list[str]] = {p.id: [] for p in asked}
    for (rid, _), reply in zip(questions, replies, strict=True):
        if reply.text.strip():
            answers[rid].append(reply.text.strip())
        else:
            counts["self_detection_empty_answers"] += 1
    vectors = embed_groups(knobs, answers)
    out: dict[str, SelfDetection] = {}
    for record in asked:
        entry: SelfDetection = {
            "rephrasings": rephrased[record.id],
            "answers": answers[record.id],
            "equivalence": EQUIVALENCE,
            "clusters": None,
            "entropy": None,
        }
        if len(answers[record.id]) < 2:
            counts["self_detection_records_under_2_answers"] += 1
        else:
            block = vectors[record.id]
            labels = cluster_by_similarity(block @ block.T, knobs.equivalence_threshold)
            entry["clusters"] = labels
            entry["entropy"] = cluster_entropy(labels)
        out[record.id] = entry
    return out
