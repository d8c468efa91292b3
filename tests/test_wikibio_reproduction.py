"""The full WikiBio set through the real DAG: SelfCheckGPT n-gram against the paper
(Table 2 "w/ Unigram (max)", Table 7), and n-gram, the grey-box proxy baselines and
FactSelfCheck's KG-frequency (spaCy triples; the LLM variants switched off) against the
committed CI baselines, each with a planted change the gate must catch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hallulab.artifacts.knowledge_graphs import graphs_by_record
from hallulab.core.units import record_scores, sentence_scores
from hallulab.data.loaders import load_jsonl_passages
from hallulab.evaluation.gate import check
from hallulab.evaluation.paper_tables import (
    PAPER_METRICS,
    SELFCHECK_TABLE2_RANDOM,
    SELFCHECK_TABLE2_UNIGRAM_MAX,
    SELFCHECK_TABLE7,
)
from hallulab.evaluation.protocol import ProtocolConfig, align, compute_metrics
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


@pytest.fixture(scope="module")
def wikibio_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_workspace(tmp_path_factory.mktemp("wikibio"))
    # n-gram and grey-box on all 238 passages; the model-based SelfCheckGPT variants on the
    # full set take CPU hours (README, "SelfCheckGPT on WikiBio") and are not part of CI.
    # FactSelfCheck's KG-frequency and RandomFact need no LLM call (its LLM variants are off here;
    # results/wikibio/factselfcheck_llm3.json holds the run with them, from which the baseline comes)
    dvc(
        root,
        "exp",
        "run",
        "-S",
        "dataset=wikibio",
        "-S",
        "factselfcheck.score.llm_variants=[]",
        "-S",
        f"ensemble.members={CI_ENSEMBLE}",
        "evaluate@selfcheck_ngram",
        "evaluate@greybox",
        "evaluate@factselfcheck",
        "evaluate@ensemble",
    )
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


@pytest.mark.parametrize("method", ["selfcheck_ngram", "greybox", "factselfcheck", "ensemble"])
def test_ci_metric_gate_against_committed_baseline(wikibio_run: Path, method: str) -> None:
    baseline = json.loads((REPO / f"tests/baselines/wikibio/{method}.json").read_text())
    metrics = json.loads((wikibio_run / f"metrics/wikibio/{method}.json").read_text())
    violations = check(metrics, baseline)
    assert not violations, "\n".join(map(str, violations))


def test_the_ensemble_combines_the_three_ci_members_on_every_sentence(wikibio_run: Path) -> None:
    info = json.loads((wikibio_run / "metrics/wikibio/ensemble.info.json").read_text())
    diagnostics = info["diagnostics"]
    assert list(diagnostics["members"]) == [
        "selfcheck_ngram/ngram_n1_max",
        "greybox/max_entropy",
        "factselfcheck/fsc_kg_freq_max",
    ]
    assert diagnostics["units"] == 1908 and diagnostics["units_missing_members"] == 0
    assert diagnostics["logistic"]["labelled_units"] == 1908 and diagnostics["logistic"]["folds_one_class"] == 0


def test_greybox_proxy_scores_every_wikibio_sentence_with_the_embedded_model(wikibio_run: Path) -> None:
    info = json.loads((wikibio_run / "metrics/wikibio/greybox.info.json").read_text())
    assert info["diagnostics"]["variants"] == ["avg_neglogp", "max_neglogp", "avg_entropy", "max_entropy"]
    assert info["diagnostics"]["llm"]["model"] == "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_ci_metric_gate_catches_a_planted_scoring_change(wikibio_run: Path) -> None:
    """Plant a realistic bug (n-grams counted case-sensitively, as if ``lower()`` were dropped):
    the re-scored, re-evaluated metrics must fail the gate."""
    passages = load_jsonl_passages(wikibio_run / "data/generated/wikibio/passages.jsonl")
    tokens = json.loads((wikibio_run / "data/scores/wikibio/selfcheck_ngram.json").read_text())
    planted, _ = score_corpora(corpora_from_dict(tokens["corpora"]), [1], ["max"], lowercase=False)
    config = ProtocolConfig(bootstrap_samples=0)
    data = align(passages, sentence_scores(planted, "ngram_n1_max"), record_scores(planted, "ngram_n1_max"))
    metrics = {"ngram_n1_max": compute_metrics(data, config)}
    baseline = json.loads((REPO / "tests/baselines/wikibio/selfcheck_ngram.json").read_text())
    baseline["metrics"] = {"ngram_n1_max": baseline["metrics"]["ngram_n1_max"]}
    violations = check(metrics, baseline)
    assert violations, "the gate let a planted scoring change through"


def test_ci_metric_gate_catches_a_planted_factselfcheck_change(wikibio_run: Path) -> None:
    """Plant a realistic bug in Eq. 11 (a sentence without facts scored 0 instead of 0.5): the
    KG-frequency sentence-level metrics recomputed from the run's own knowledge graphs must fail
    the gate, while the correct rule recomputed the same way passes it."""
    passages = load_jsonl_passages(wikibio_run / "data/generated/wikibio/passages.jsonl")
    raw = json.loads((wikibio_run / "data/artifacts/wikibio/knowledge_graphs.json").read_text())
    graphs = graphs_by_record(raw)
    config = ProtocolConfig(bootstrap_samples=0)
    baseline = json.loads((REPO / "tests/baselines/wikibio/factselfcheck.json").read_text())
    sentence_keys = ("nonfact_aucpr", "nonfact_star_aucpr", "factual_aucpr", "roc_auc", "avg_precision")
    baseline["metrics"] = {"fsc_kg_freq_max": {k: baseline["metrics"]["fsc_kg_freq_max"][k] for k in sentence_keys}}

    def metrics_with(no_fact_score: float) -> dict[str, dict[str, float]]:
        by_record = {
            passage.id: [
                max((frequency_score(f, graphs[passage.id].sample_kgs) for f in kg), default=no_fact_score)
                for kg in graphs[passage.id].sentence_kgs
            ]
            for passage in passages
        }
        means = {rid: sum(values) / len(values) for rid, values in by_record.items()}
        return {"fsc_kg_freq_max": compute_metrics(align(passages, by_record, means), config)}

    assert not check(metrics_with(0.5), baseline), "the correct rule, recomputed, passes"
    assert check(metrics_with(0.0), baseline), "the gate let a planted Eq. 11 change through"
