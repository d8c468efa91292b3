"""Records a method leaves out are counted and named the same way by every method: the shared
helper (:mod:`hallulab.methods.skipped`), then the methods that filter records, on in-memory
records (no model: FactSelfCheck's KG-frequency variants, n-gram with a stand-in tokenizer,
grey-box, lexical similarity, SAC3)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, ClassVar

import pandas as pd
import pytest

from hallulab.core.units import record_scores
from hallulab.data.schema import Record
from hallulab.methods.sample_matrix import scorable
from hallulab.methods.skipped import HAS_RESPONSE, HAS_SAMPLES, partition, present_in, skip_diagnostics
from hallulab.pipeline.context import AggregateContext, BuildContext
from hallulab.pipeline.params import ParamsView

SCORED = Record(id="scored", response="Ada wrote. She died.", sentences=("Ada wrote.", "She died."), samples=("x", "y"))
NO_SAMPLES = Record(id="empty", response="Ada wrote.", sentences=("Ada wrote.",), samples=())
PROMPT_ONLY = Record(id="asked", response=None, sentences=(), prompt="Who was Ada?")
RECORDS = [SCORED, NO_SAMPLES, PROMPT_ONLY]
SELECTION = {"used": None, "selection": "first", "seed": 0}


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


# ---------------------------------------------------------------- the shared helper
def test_partition_keeps_input_order_and_gives_each_record_its_first_failed_reason() -> None:
    found = partition([PROMPT_ONLY, SCORED, NO_SAMPLES], HAS_RESPONSE, HAS_SAMPLES)
    assert [p.id for p in found.kept] == ["scored"]
    assert [(s.record_id, s.reason) for s in found.skipped] == [("asked", "no response"), ("empty", "no samples")]
    assert found.diagnostics() == {"skipped_records": 2, "skipped_record_ids": ["asked", "empty"]}
    graph = partition(RECORDS, present_in(["scored"], "no knowledge graph"))
    assert {s.reason for s in graph.skipped} == {"no knowledge graph"}


def test_nothing_skipped_is_zero_and_an_empty_list_and_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    found = partition([SCORED], HAS_RESPONSE, HAS_SAMPLES)
    assert found.diagnostics() == {"skipped_records": 0, "skipped_record_ids": []}
    with caplog.at_level(logging.WARNING):
        found.warn(logging.getLogger("t"), "M")
    assert _warnings(caplog) == []


def test_one_warning_line_names_the_skipped_records_by_reason(caplog: pytest.LogCaptureFixture) -> None:
    many = [Record(id=f"r{i:02d}", response=None, sentences=()) for i in range(12)]
    with caplog.at_level(logging.WARNING):
        partition([*many, NO_SAMPLES], HAS_RESPONSE, HAS_SAMPLES).warn(logging.getLogger("t"), "Method")
    (line,) = _warnings(caplog)
    assert line.startswith("Method: 13 record(s) skipped")
    assert "no samples: empty" in line and "no response: r00, r01" in line and "and 2 more" in line
    assert "\n" not in line


def test_the_sample_methods_share_one_rule() -> None:
    found = scorable(RECORDS)
    assert [p.id for p in found.kept] == ["scored"]
    assert found.diagnostics() == skip_diagnostics(["empty", "asked"])


def test_the_sample_matrix_aggregate_reports_what_the_score_step_stored() -> None:
    import numpy as np

    from hallulab.methods.sample_matrix import aggregate
    from hallulab.methods.sample_scores import SampleMatrices
    from hallulab.methods.sample_selection import SampleKnobs

    found = scorable(RECORDS)
    stored = SampleMatrices("selfcheck_nli", "nli", {}, {"scored": np.zeros((2, 2))}, found.diagnostics())
    _, diagnostics = aggregate(SampleMatrices.from_dict(stored.to_dict()), SampleKnobs())
    assert (diagnostics["skipped_records"], diagnostics["skipped_record_ids"]) == (2, ["asked", "empty"])


# ---------------------------------------------------------------- FactSelfCheck (no LLM variant)
GRAPHS = {
    "records": {
        rid: {"entities": [], "relations": [], "sentence_kgs": sentence_kgs, "sample_kgs": sample_kgs}
        for rid, sentence_kgs, sample_kgs in [
            ("scored", [[["ada", "wrote", "notes"]], []], [[["ada", "wrote", "notes"]], []]),
            ("empty", [[["ada", "wrote", "notes"]]], []),  # a graph, but no sample to check it against
        ]
    }
}


def _fsc_params(step: str) -> ParamsView:
    from hallulab.methods.factselfcheck import SPEC

    params = {
        "factselfcheck": {
            "score": {"llm_variants": [], "llm_records": None, "max_new_tokens": 4, "top_k": 0},
            "aggregate": {"aggregations": ["max"], "random_seed": 0},
        },
        "samples": SELECTION,
    }
    # the score step's view without its LLM role: no variant asks the evaluator
    declared = SPEC.aggregate.param_keys() if step == "aggregate" else ("factselfcheck.score",)
    return ParamsView(params, declared, f"{step}_factselfcheck")


def test_factselfcheck_names_and_counts_a_record_without_samples(caplog: pytest.LogCaptureFixture) -> None:
    from hallulab.methods.factselfcheck.aggregate import aggregate
    from hallulab.methods.factselfcheck.score import score

    artifacts = {"knowledge_graphs": GRAPHS}
    with caplog.at_level(logging.WARNING):
        raw = score(BuildContext("t", RECORDS, artifacts, _fsc_params("score"), None))  # type: ignore[arg-type]
        done = aggregate(AggregateContext("t", RECORDS, artifacts, raw, _fsc_params("aggregate")))
    assert set(record_scores(done.scores, "fsc_kg_freq_max")) == {"scored"}
    assert done.diagnostics["skipped_records"] == 2
    assert done.diagnostics["skipped_record_ids"] == ["asked", "empty"]
    lines = _warnings(caplog)
    assert len(lines) == 2  # the score step's log and the aggregate step's
    assert all("FactSelfCheck: 2 record(s) skipped" in line and "no samples: empty" in line for line in lines)


# ---------------------------------------------------------------- SelfCheck n-gram (stand-in tokenizer)
class WhitespaceTokenizer:
    """What the n-gram score step asks of spaCy: words split on spaces, sentences on '. '."""

    identity: ClassVar[dict[str, str]] = {"model": "whitespace"}

    def require_fits(self, texts: Iterable[tuple[str, str, str]]) -> None:
        list(texts)

    def tokenize(self, texts: list[str]) -> list[list[str]]:
        return [text.split() for text in texts]

    def split_sentences(self, texts: list[str]) -> list[list[list[str]]]:
        return [[s.split() for s in text.split(". ")] for text in texts]


class NgramResources:
    spacy = WhitespaceTokenizer()


def test_ngram_names_the_records_it_skips_in_its_raw_scores_and_diagnostics(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from hallulab.methods.selfcheck_ngram import SPEC
    from hallulab.methods.selfcheck_ngram.aggregate import aggregate
    from hallulab.methods.selfcheck_ngram.raw import NgramScores
    from hallulab.methods.selfcheck_ngram.score import score

    assert SPEC.score is not None
    params = {
        "spacy": {"model": "whitespace"},
        "selfcheck_ngram": {"response_split": "given", "n": [1], "aggregations": ["avg"], "lowercase": True},
        "samples": SELECTION,
    }
    params["selfcheck_ngram"]["smoothing_k"] = 0.0
    view = ParamsView(params, SPEC.score.param_keys(), "score_selfcheck_ngram")
    with caplog.at_level(logging.WARNING):
        raw = score(BuildContext("t", RECORDS, {}, view, NgramResources()))  # type: ignore[arg-type]
    assert (raw.skipped_records, raw.skipped_record_ids) == (2, ["asked", "empty"])
    assert set(raw.corpora) == {"scored"}
    (line,) = _warnings(caplog)
    assert "no response: asked" in line and "no samples: empty" in line
    stored = NgramScores.from_dict(raw.to_dict())
    done = aggregate(
        AggregateContext("t", RECORDS, {}, stored, ParamsView(params, SPEC.aggregate.param_keys(), "aggregate"))
    )
    assert done.diagnostics["skipped_records"] == done.diagnostics["skipped_records_without_samples"] == 2
    assert done.diagnostics["skipped_record_ids"] == ["asked", "empty"]
    assert set(record_scores(done.scores, "ngram_n1_avg")) == {"scored"}


def test_ngram_scores_stored_before_the_ids_still_read() -> None:
    from hallulab.methods.selfcheck_ngram.raw import NgramScores

    old = NgramScores.from_dict({"spacy": {}, "response_split": "given", "skipped_records": 1, "corpora": {}})
    assert old.skipped_record_ids == []


# ---------------------------------------------------------------- grey-box, lexical similarity, SAC3
def test_greybox_names_a_record_without_token_statistics() -> None:
    from hallulab.core.token_stats import TokenStats
    from hallulab.methods.greybox.aggregate import aggregate

    pieces = ["Ada", " wrote", ".", " She", " died", "."]
    tokens, offset = [], 0
    for piece in pieces:
        tokens.append(TokenStats(token=piece, logprob=-1.0, entropy=0.5, offset=offset).to_dict())
        offset += len(piece)
    sentences = pd.DataFrame(
        {
            "record_id": ["scored", "scored", "empty"],
            "sentence_index": [0, 1, 0],
            "start": [0, 11, 0],
            "end": [10, 20, 10],
        }
    )
    artifacts: dict[str, Any] = {
        "response_tokens": {"tokens": {"scored": tokens}, "sources": {"scored": "proxy"}},
        "sentences": sentences,
    }
    done = aggregate(AggregateContext("t", RECORDS, artifacts, None, ParamsView({}, (), "aggregate_greybox")))
    assert set(record_scores(done.scores, "avg_neglogp")) == {"scored"}
    assert done.diagnostics["skipped_records"] == 2
    assert done.diagnostics["skipped_record_ids"] == ["asked", "empty"]


def test_lexical_similarity_keeps_its_counts_and_names_the_skipped_records() -> None:
    from hallulab.methods.lexical_similarity import SPEC
    from hallulab.methods.lexical_similarity.aggregate import aggregate

    params = {"lexical_similarity": {"metrics": ["rougeL"], "use_stemmer": False}, "samples": SELECTION}
    one_sample = Record(id="one", response="Ada.", sentences=("Ada.",), samples=("Ada.",))
    done = aggregate(
        AggregateContext(
            "t", [*RECORDS, one_sample], {}, None, ParamsView(params, SPEC.aggregate.param_keys(), "aggregate")
        )
    )
    assert done.diagnostics["records_without_response"] == 1
    assert done.diagnostics["records_with_fewer_than_two_samples"] == 2
    assert done.diagnostics["records_scored"] == 1
    assert done.diagnostics["skipped_records"] == 3
    assert done.diagnostics["skipped_record_ids"] == ["asked", "empty", "one"]


def test_sac3_names_a_record_neither_variant_scored() -> None:
    from hallulab.methods.sac3.aggregate import aggregate

    verdicts = Record(id="v", response="Yes.", sentences=("Yes.",), meta={"self_sc": ["Guess: No"]})
    done = aggregate(AggregateContext("t", [verdicts, SCORED], {}, None, ParamsView({}, (), "aggregate_sac3")))
    assert done.diagnostics["sac3_q_records_without_verdicts"] == 2  # per variant, as before
    assert done.diagnostics["skipped_records"] == 1
    assert done.diagnostics["skipped_record_ids"] == ["scored"]
