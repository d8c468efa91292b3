"""WikiBio through the real DAG: SelfCheckGPT n-gram on the whole set against the paper
(Table 2 "w/ Unigram (max)", Table 7) and its committed CI baseline; the grey-box proxy
baselines, FactSelfCheck's KG-frequency (spaCy triples; the LLM variants switched off) and the
ensemble of the three against their committed CI baselines on the detector table's WikiBio
subset; each gate with a planted change it must catch.

Why each size: the paper's Table 7 and Table 2 numbers are over all 238 passages (1,908
sentences), so the n-gram reproduction runs on all of them. The other gates compare a run with
its own committed numbers, not with a paper, so they need only a subset on which a change of
the method shows: the table's 40 passages (``dataset.limit=40``, 344 sentences, 263 of them
hallucinated: both classes at every metric the gate holds), where the gate's tolerance (0.01
points; 0.05 for the grey-box proxy and the ensemble, whose model floats differ across CPUs) is
far below what a changed scoring rule moves, as the planted Eq. 11 change below shows.
``HALLULAB_WRITE_SLICE_BASELINES=1 pytest tests/test_wikibio_reproduction.py`` rewrites the
subset's baselines after a deliberate change (commit them with it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hallulab.artifacts.knowledge_graphs import graphs_by_record
from hallulab.core.units import record_scores, sentence_scores
from hallulab.data.loaders import load_jsonl_records
from hallulab.evaluation.gate import check
from hallulab.evaluation.paper_tables import (
    PAPER_METRICS,
    SELFCHECK_TABLE2_RANDOM,
    SELFCHECK_TABLE2_UNIGRAM_MAX,
    SELFCHECK_TABLE7,
)
from hallulab.evaluation.protocol import ProtocolKnobs, align, compute_metrics
from hallulab.methods.factselfcheck.scoring import frequency_score
from hallulab.methods.selfcheck_ngram.corpus import corpora_from_dict
from hallulab.methods.selfcheck_ngram.ngram import score_corpora
from tests.conftest import REPO, requires_wikibio
from tests.workspace import copy_workspace, dvc

pytestmark = [pytest.mark.slow, requires_wikibio]

#: Cells whose distance to Table 7 exceeds 0.1, with the bound we hold them to. Cause
#: (README, "Reproduction"): the reference splits every sample into sentences with the spaCy
#: parser and pads n-grams at sentence starts, so its counts depend on the parser version
#: (2023's en_core_web_sm vs 3.8.0 here); swapping only the segmenter moves cells by up to 0.41.
DOCUMENTED_DEVIATIONS = {
    ("ngram_n5_avg", "nonfact_star_aucpr"): 0.2,
    ("ngram_n4_max", "passage_pearson"): 0.35,
    ("ngram_n5_max", "passage_pearson"): 0.35,
}
TOLERANCE = 0.1 + 1e-9
#: The ensemble of the members CI computes anyway (BERTScore, in the data set's default
#: members, is the slow one to score: results/wikibio/ensemble.json holds the run with it).
CI_ENSEMBLE = (
    "[{method:selfcheck_ngram,variant:ngram_n1_max},{method:greybox,variant:max_entropy},"
    "{method:factselfcheck,variant:fsc_kg_freq_max}]"
)  # "within 0.1" of the published value, compared at its 2 decimals


#: the detector table's WikiBio subset (conf/benchmark.yaml), for the gates that need no paper number
SUBSET = ("dataset.limit=40",)
#: the methods gated on :data:`SUBSET`; n-gram is gated on the whole set
SUBSET_METHODS = ("greybox", "factselfcheck", "ensemble")
WRITE_BASELINES = bool(os.environ.get("HALLULAB_WRITE_SLICE_BASELINES"))
#: the sentences of :data:`SUBSET`'s 40 passages
SUBSET_SENTENCES = 344


@pytest.fixture(scope="module")
def wikibio_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SelfCheckGPT n-gram on all 238 passages (the paper's tables)."""
    root = copy_workspace(tmp_path_factory.mktemp("wikibio"), keep_lock=False)
    dvc(root, "exp", "run", "-S", "dataset=wikibio", "aggregate_selfcheck_ngram")
    return root


@pytest.fixture(scope="module")
def wikibio_subset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The grey-box proxy, FactSelfCheck's KG-frequency and RandomFact (no LLM call: its LLM
    variants are off here; results/wikibio/factselfcheck_llm3.json holds the run with them) and
    the ensemble of the three CI members on :data:`SUBSET`."""
    root = copy_workspace(tmp_path_factory.mktemp("wikibio-subset"), keep_lock=False)
    settings = ("dataset=wikibio", *SUBSET, "factselfcheck.score.llm_variants=[]", f"ensemble.members={CI_ENSEMBLE}")
    targets = [f"aggregate_{method}" for method in SUBSET_METHODS]
    dvc(root, "exp", "run", *(arg for value in settings for arg in ("-S", value)), *targets)
    if WRITE_BASELINES:
        for method in SUBSET_METHODS:
            metrics = json.loads((root / f"metrics/wikibio/{method}.json").read_text())
            target = REPO / f"tests/baselines/wikibio/{method}.json"
            tolerance = json.loads(target.read_text())["tolerance"]  # kept: a rewrite moves the numbers only
            target.write_text(json.dumps({"tolerance": tolerance, "metrics": metrics}, indent=2) + "\n")
    return root


def _metrics(root: Path) -> dict[str, dict[str, float]]:
    return json.loads((root / "metrics/wikibio/selfcheck_ngram.json").read_text())


def test_table7_every_cell_within_tolerance_of_the_paper(wikibio_run: Path) -> None:
    ours = _metrics(wikibio_run)
    failures = []
    for variant, paper in SELFCHECK_TABLE7.items():
        for metric in PAPER_METRICS:
            bound = DOCUMENTED_DEVIATIONS.get((variant, metric), TOLERANCE)
            difference = round(ours[variant][metric], 2) - paper[metric]  # the paper prints 2 decimals
            if abs(difference) > bound:
                failures.append(f"{variant}.{metric}: {ours[variant][metric]:.2f} vs {paper[metric]:.2f}")
    assert not failures, failures


def test_table2_unigram_max_row_within_0_1(wikibio_run: Path) -> None:
    ours = _metrics(wikibio_run)["ngram_n1_max"]
    for metric, value in SELFCHECK_TABLE2_UNIGRAM_MAX.items():
        assert round(ours[metric], 2) == pytest.approx(value, abs=TOLERANCE), metric


def test_random_baseline_and_counts_match_the_paper(wikibio_run: Path) -> None:
    info = json.loads((wikibio_run / "metrics/wikibio/selfcheck_ngram.info.json").read_text())
    assert info["passages"] == 238 and info["sentences"] == 1908
    for metric, value in SELFCHECK_TABLE2_RANDOM.items():
        assert round(info["random_baseline"][metric], 2) == value
    assert all(count == 0 for count in info["diagnostics"]["unseen_tokens"].values())


def test_ci_metric_gate_against_committed_baseline(wikibio_run: Path) -> None:
    _assert_within_baseline(wikibio_run, "selfcheck_ngram")


@pytest.mark.parametrize("method", SUBSET_METHODS)
def test_ci_metric_gate_on_the_subset_against_committed_baseline(wikibio_subset: Path, method: str) -> None:
    _assert_within_baseline(wikibio_subset, method)


def _assert_within_baseline(root: Path, method: str) -> None:
    baseline = json.loads((REPO / f"tests/baselines/wikibio/{method}.json").read_text())
    metrics = json.loads((root / f"metrics/wikibio/{method}.json").read_text())
    violations = check(metrics, baseline)
    assert not violations, "\n".join(map(str, violations))


def test_the_ensemble_combines_the_three_ci_members_on_every_sentence(wikibio_subset: Path) -> None:
    info = json.loads((wikibio_subset / "metrics/wikibio/ensemble.info.json").read_text())
    diagnostics = info["diagnostics"]
    assert list(diagnostics["members"]) == [
        "selfcheck_ngram/ngram_n1_max",
        "greybox/max_entropy",
        "factselfcheck/fsc_kg_freq_max",
    ]
    assert diagnostics["units"] == SUBSET_SENTENCES and diagnostics["units_missing_members"] == 0
    assert (
        diagnostics["logistic"]["labelled_units"] == SUBSET_SENTENCES
        and diagnostics["logistic"]["folds_one_class"] == 0
    )


def test_greybox_proxy_scores_every_sentence_of_the_subset_with_the_embedded_model(wikibio_subset: Path) -> None:
    info = json.loads((wikibio_subset / "metrics/wikibio/greybox.info.json").read_text())
    assert info["sentences"] == SUBSET_SENTENCES
    assert info["diagnostics"]["variants"] == ["avg_neglogp", "max_neglogp", "avg_entropy", "max_entropy"]
    assert info["diagnostics"]["llm"]["model"] == "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_ci_metric_gate_catches_a_planted_scoring_change(wikibio_run: Path) -> None:
    """Plant a realistic bug (n-grams counted case-sensitively, as if ``lower()`` were dropped):
    the re-scored, re-evaluated metrics must fail the gate."""
    records = load_jsonl_records(wikibio_run / "data/generated/wikibio/passages.jsonl")
    tokens = json.loads((wikibio_run / "data/scores/wikibio/selfcheck_ngram.json").read_text())
    planted, _ = score_corpora(corpora_from_dict(tokens["corpora"]), [1], ["max"], lowercase=False)
    config = ProtocolKnobs(bootstrap_samples=0)
    data = align(records, sentence_scores(planted, "ngram_n1_max"), record_scores(planted, "ngram_n1_max"))
    metrics = {"ngram_n1_max": compute_metrics(data, config)}
    baseline = json.loads((REPO / "tests/baselines/wikibio/selfcheck_ngram.json").read_text())
    baseline["metrics"] = {"ngram_n1_max": baseline["metrics"]["ngram_n1_max"]}
    violations = check(metrics, baseline)
    assert violations, "the gate let a planted scoring change through"


def test_ci_metric_gate_catches_a_planted_factselfcheck_change(wikibio_subset: Path) -> None:
    """Plant a realistic bug in Eq. 11 (a sentence without facts scored 0 instead of 0.5): the
    KG-frequency sentence-level metrics recomputed from the run's own knowledge graphs must fail
    the gate, while the correct rule recomputed the same way passes it."""
    records = load_jsonl_records(wikibio_subset / "data/generated/wikibio/passages.jsonl")
    raw = json.loads((wikibio_subset / "data/artifacts/wikibio/knowledge_graphs.json").read_text())
    graphs = graphs_by_record(raw)
    config = ProtocolKnobs(bootstrap_samples=0)
    baseline = json.loads((REPO / "tests/baselines/wikibio/factselfcheck.json").read_text())
    sentence_keys = ("nonfact_aucpr", "nonfact_star_aucpr", "factual_aucpr", "roc_auc", "avg_precision")
    baseline["metrics"] = {"fsc_kg_freq_max": {k: baseline["metrics"]["fsc_kg_freq_max"][k] for k in sentence_keys}}

    def metrics_with(no_fact_score: float) -> dict[str, dict[str, float]]:
        by_record = {
            record.id: [
                max((frequency_score(f, graphs[record.id].sample_kgs) for f in kg), default=no_fact_score)
                for kg in graphs[record.id].sentence_kgs
            ]
            for record in records
        }
        means = {rid: sum(values) / len(values) for rid, values in by_record.items()}
        return {"fsc_kg_freq_max": compute_metrics(align(records, by_record, means), config)}

    assert not check(metrics_with(0.5), baseline), "the correct rule, recomputed, passes"
    assert check(metrics_with(0.0), baseline), "the gate let a planted Eq. 11 change through"


@pytest.mark.parametrize(
    ("method", "variant"),
    [("greybox", "max_neglogp"), ("greybox", "max_entropy"), ("factselfcheck", "fsc_kg_freq_max")],
)
def test_the_subset_run_gives_the_detector_tables_wikibio_cell(wikibio_subset: Path, method: str, variant: str) -> None:
    """The subset is the detector table's WikiBio subset: the CI run's ROC-AUC of each of these
    cells (no generation in them) is the published table's point value (results/benchmark.json),
    within the method's gate tolerance (the grey-box proxy's log-probabilities carry the CPU's
    float rounding)."""
    table = json.loads((REPO / "results/benchmark.json").read_text())["columns"]["wikibio"]["rows"]
    metrics = json.loads((wikibio_subset / f"metrics/wikibio/{method}.json").read_text())
    tolerance = json.loads((REPO / f"tests/baselines/wikibio/{method}.json").read_text())["tolerance"]
    cell = table[f"{method}/{variant}"]
    assert cell["units"] == SUBSET_SENTENCES
    assert metrics[variant]["roc_auc"] == pytest.approx(cell["metrics"]["roc_auc"][0], abs=tolerance)
