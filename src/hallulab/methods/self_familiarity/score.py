"""Self-Familiarity, expensive step: concept explanations, masked concept inference by
constrained beam search (cached per distinct concept), and the model calls of Table 2's
baselines (Forward-Inference / Forward-Self replies, sample similarities).

The search ranks its finished hypotheses by sum / (P + length), P counted on the prompt as the
released code builds it (:mod:`~hallulab.methods.self_familiarity.inference`), and returns the
best T_B; every one of them is stored, best first, so s_i is the first (the released code
asks for one returned sequence, the best) and the aggregate step's other normalisations pick
from the same list."""

from __future__ import annotations

import time
from collections import Counter
from typing import cast

from hallulab.artifacts.concepts import concepts_by_record
from hallulab.core.config import ConfigError
from hallulab.data.schema import Record
from hallulab.llm.base import ConstrainedParams, DecodingParams
from hallulab.methods.self_familiarity.inference import inference_input
from hallulab.methods.self_familiarity.knobs import SelfFamiliarityScoreKnobs
from hallulab.methods.self_familiarity.masking import concept_texts, constraint_strings
from hallulab.methods.self_familiarity.raw import (
    ConceptSearch,
    ConstrainedHypothesis,
    ForwardReply,
    RecordBaselines,
    SelfFamiliarityScores,
    StoredScoreKnobs,
)
from hallulab.methods.self_familiarity.self_detection import self_detection
from hallulab.methods.self_familiarity.similarity import sample_similarities
from hallulab.methods.skipped import HAS_PROMPT, partition
from hallulab.pipeline.context import BuildContext


def _forward(
    ctx: BuildContext, knobs: SelfFamiliarityScoreKnobs, key: str, rows: list[dict[str, str]]
) -> list[ForwardReply]:
    template = ctx.resources.prompt(key)
    llm = ctx.resources.llm("generator")
    top_k = knobs.top_k if llm.capabilities.top_k_alternatives else 0
    params = DecodingParams(max_new_tokens=knobs.forward_tokens, temperature=0.0, top_k_alternatives=top_k)
    replies = llm.generate([template.messages(**row) for row in rows], params) if rows else []
    return [
        {
            "text": reply.text,
            "logprob": sum(t.logprob for t in reply.tokens) if reply.tokens else None,
            "first_top": [list(pair) for pair in reply.tokens[0].top] if reply.tokens else [],
        }
        for reply in replies
    ]


def _baselines(
    ctx: BuildContext, knobs: SelfFamiliarityScoreKnobs, records: list[Record], counts: Counter[str]
) -> dict[str, RecordBaselines]:
    """Step 3: Table 2's baselines that call the model (forward questions, sampling, Self-Detection)."""
    baselines: dict[str, RecordBaselines] = {p.id: {} for p in records}
    if "forward_inference" in knobs.baselines:
        rows = [{"domain": str(p.meta.get("domain", "general")), "instruction": p.prompt or ""} for p in records]
        for p, reply in zip(
            records, _forward(ctx, knobs, "self_familiarity.forward_inference_prompt", rows), strict=True
        ):
            baselines[p.id]["forward_inference"] = reply
    if "forward_self" in knobs.baselines:
        answered = [p for p in records if p.response]
        counts["forward_self_without_response"] = len(records) - len(answered)
        rows = [{"response": (p.response or "").replace("\n", " "), "instruction": p.prompt or ""} for p in answered]
        for p, reply in zip(answered, _forward(ctx, knobs, "self_familiarity.forward_self_prompt", rows), strict=True):
            baselines[p.id]["forward_self"] = reply
    sampling = [b for b in knobs.baselines if b.startswith("sample_")]
    if sampling:
        similarities = sample_similarities(ctx, [p for p in records], knobs, sampling, counts)
        for rid, values in similarities.items():
            baselines[rid].update(values)
    if "self_detection" in knobs.baselines:
        for rid, entry in self_detection(ctx, knobs, records, counts).items():
            baselines[rid]["self_detection"] = entry
    return baselines


def score(ctx: BuildContext) -> SelfFamiliarityScores:
    knobs = ctx.params.typed(SelfFamiliarityScoreKnobs, "self_familiarity.score")
    counts: Counter[str] = Counter()
    raw_concepts = ctx.artifacts["concepts"]
    by_processing = {name: concepts_by_record(raw_concepts, name) for name in knobs.processings}
    texts = concept_texts(
        [c.text for c in concepts] for records in by_processing.values() for concepts in records.values()
    )
    llm = ctx.resources.llm("generator")
    if not llm.capabilities.constrained_search:
        raise ConfigError(
            f"llms.generator ({ctx.resources.llm_name('generator')}): Self-Familiarity needs constrained beam "
            "search over the model's own decoding (backend hf)"
        )

    # 1. explanations (Eq. 2), greedy, l_F tokens
    started = time.perf_counter()
    explain = ctx.resources.prompt("self_familiarity.explanation_prompt")
    explanations = llm.generate(
        [explain.messages(concept=c) for c in texts], DecodingParams(max_new_tokens=knobs.explanation_tokens)
    )
    explained = time.perf_counter()

    # 2. masking (Eq. 3) and concept inference by constrained beam search (Eq. 4-5)
    infer = ctx.resources.prompt("self_familiarity.inference_prompt")
    generator = ctx.resources.llm_config("generator")
    prompt_format = generator.get("prompt_format") if generator.get("backend") == "hf" else None
    inputs = [
        inference_input(
            e.text,
            c,
            lambda text: infer.messages(masked_explanation=text),
            masking=knobs.masking,
            prompt_format=prompt_format,
        )
        for e, c in zip(explanations, texts, strict=True)
    ]
    found = llm.constrained_search(
        [i.prompt for i in inputs],
        [constraint_strings(c) for c in texts],
        ConstrainedParams(
            beam_size=knobs.beam_size,
            max_new_tokens=knobs.answer_tokens,
            normalise="total",
            prompt_as_is=any(i.as_is for i in inputs),
        ),
        [i.length_text for i in inputs],
    )
    searched = time.perf_counter()
    concepts: dict[str, ConceptSearch] = {}
    for text, explanation, given, result in zip(texts, explanations, inputs, found, strict=True):
        counts["explanations_empty"] += not explanation.text.strip()
        counts["explanations_without_concept"] += given.spans == 0
        counts["concepts_not_forceable"] += result.forced == 0
        counts["concepts_without_constrained_answer"] += result.forced > 0 and not result.hypotheses
        concepts[text] = {
            "explanation": explanation.text,
            "masked": given.masked,
            "masked_spans": given.spans,
            "forced": result.forced,
            "prompt_tokens": result.prompt_tokens,
            "input_tokens": result.input_tokens,
            "hypotheses": [cast(ConstrainedHypothesis, dict(h)) for h in result.hypotheses],
            "finished": len(result.hypotheses),
        }

    # 3. Table 2's baselines, for the records with a prompt (the concepts artifact has no other)
    chosen = partition(ctx.records, HAS_PROMPT)
    chosen.warn(ctx.log, "Self-Familiarity")
    baselines = _baselines(ctx, knobs, chosen.kept, counts)
    finished = time.perf_counter()
    cost = {
        "concepts": len(texts),
        "seconds_explanations": round(explained - started, 3),
        "seconds_constrained_search": round(searched - explained, 3),
        "seconds_baselines": round(finished - searched, 3),
        "seconds_per_concept": round((searched - started) / max(len(texts), 1), 3),
        "note": "wall time of this run; calls found in the cache cost ~0 s",
    }
    ctx.log.info("self-familiarity: %d concepts, %s", len(texts), cost)
    ctx.run_stats["self_familiarity_cost"] = cost  # the run log, not the output: seconds vary per run
    return SelfFamiliarityScores(
        knobs=cast(StoredScoreKnobs, {k: (list(v) if isinstance(v, tuple) else v) for k, v in knobs.__dict__.items()}),
        concepts=concepts,
        baselines=baselines,
        counts=dict(counts),
        skipped_record_ids=chosen.skipped_ids(),
    )
