"""The benchmark's applicability rule: every registered method on every data set config, read
off the methods' declarations and the loaders' provisions, held against the real registry,
against throw-away declarations, and against what the evaluation actually wrote (the committed
results on the real data sets and the committed toy metrics)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from hallulab.benchmark.applicability import (
    BenchmarkDataset,
    Cell,
    Combination,
    applicability,
    benchmark_datasets,
    cell,
    evaluated_levels,
)
from hallulab.core.needs import PROMPTS, SAC3_OUTPUTS, Need
from hallulab.data.sets import dataset_spec
from hallulab.evaluation.levels import LEVEL_METRICS
from hallulab.evaluation.protocol import METRIC_KEYS
from hallulab.pipeline import registry
from hallulab.pipeline.members import Member
from hallulab.pipeline.spec import MethodSpec

REPO = Path(__file__).resolve().parents[1]
METHODS = registry.methods()
BENCHMARK = ("concept7", "factualbio", "hotpotqa", "nq_open", "wikibio")


@pytest.fixture(scope="module")
def datasets() -> tuple[BenchmarkDataset, ...]:
    return benchmark_datasets()


@pytest.fixture(scope="module")
def cells(datasets: tuple[BenchmarkDataset, ...]) -> dict[tuple[str, str], Cell]:
    return {(c.method, c.dataset): c for c in applicability(METHODS, datasets)}


def test_the_columns_are_the_dataset_configs_whose_loader_declares_a_provision(
    datasets: tuple[BenchmarkDataset, ...],
) -> None:
    """toy and jsonl read a JSONL file (what it holds is the file's business): not columns."""
    assert tuple(d.name for d in datasets) == BENCHMARK
    assert {d.name: d.loader for d in datasets} == {
        "concept7": "concept7",
        "factualbio": "factualbio",
        "hotpotqa": "sac3",
        "nq_open": "sac3",
        "wikibio": "wikibio",
    }
    assert all(d.provision is dataset_spec(d.loader).provision for d in datasets)


def test_every_registered_method_has_one_cell_per_data_set(cells: dict[tuple[str, str], Cell]) -> None:
    assert set(cells) == {(m, d) for m in METHODS for d in BENCHMARK}


def test_a_need_the_data_set_does_not_meet_is_the_reason(cells: dict[tuple[str, str], Cell]) -> None:
    assert cells["sac3", "wikibio"].reason == SAC3_OUTPUTS.reason == "needs the data set's SAC3 verifier outputs"
    assert cells["sac3", "factualbio"].reason == SAC3_OUTPUTS.reason
    assert cells["sac3", "nq_open"].levels == cells["sac3", "hotpotqa"].levels == ("response",)
    assert cells["self_familiarity", "wikibio"].reason == PROMPTS.reason  # WikiBio has no prompts


def test_self_familiarity_applies_only_on_concept7(cells: dict[tuple[str, str], Cell]) -> None:
    applies = {d for d in BENCHMARK if cells["self_familiarity", d].applies}
    assert applies == {"concept7"}
    assert cells["self_familiarity", "concept7"].levels == ("prompt",)
    # prompts and log-probabilities are there; prompt labels are not
    assert cells["self_familiarity", "factualbio"].reason == "no labels at the prompt level"
    assert cells["self_familiarity", "nq_open"].reason == "no labels at the prompt level"


def test_levels_are_the_labelled_ones_among_those_the_method_scores(cells: dict[tuple[str, str], Cell]) -> None:
    # CCP scores claims, and from them sentences and responses; FactualBio labels claims and sentences
    assert cells["ccp", "factualbio"].levels == ("claim", "sentence", "passage")
    assert cells["ccp", "wikibio"].levels == ("sentence", "passage")
    assert cells["ccp", "concept7"].reason == "no labels at the claim, sentence or response level"
    # SelfCheckGPT: sentences, and the passage score of §7.2 (a response-level row)
    assert cells["selfcheck_nli", "wikibio"].levels == ("sentence", "passage")
    assert cells["selfcheck_ngram", "nq_open"].levels == ("response",)
    # a response-level method on sentence labels: the protocol correlates passages only for a
    # variant with sentence scores, so WikiBio's passage labels do not evaluate it
    assert cells["lexical_similarity", "wikibio"].reason == "no labels at the response level"
    assert cells["semantic_entropy", "hotpotqa"].levels == ("response",)


def test_the_length_baseline_applies_on_every_data_set(cells: dict[tuple[str, str], Cell]) -> None:
    assert {d: cells["length", d].levels for d in BENCHMARK} == {
        "concept7": ("prompt",),
        "factualbio": ("claim", "sentence", "passage"),
        "hotpotqa": ("response",),
        "nq_open": ("response",),
        "wikibio": ("sentence", "passage"),
    }


def test_the_ensemble_applies_where_its_configured_members_do(
    cells: dict[tuple[str, str], Cell], datasets: tuple[BenchmarkDataset, ...]
) -> None:
    """Each data set's config sets the ensemble's level and members (conf/dataset/<name>.yaml)."""
    by_name = {d.name: d for d in datasets}
    for name in BENCHMARK:
        combination = by_name[name].combinations["ensemble"]
        assert all(cells[m.method, name].applies for m in combination.members)
        assert cells["ensemble", name].levels == evaluated_levels((combination.level,), by_name[name].provision)
    assert cells["ensemble", "factualbio"].levels == ("claim",)
    assert cells["ensemble", "wikibio"].levels == ("sentence", "passage")


def test_a_combining_method_is_na_with_its_first_unusable_member(datasets: tuple[BenchmarkDataset, ...]) -> None:
    wikibio = next(d for d in datasets if d.name == "wikibio")
    factualbio = next(d for d in datasets if d.name == "factualbio")
    ensemble = METHODS["ensemble"]
    members = (Member("selfcheck_ngram", "ngram_n1_max"), Member("sac3", "sac3_q"))
    on_wikibio = BenchmarkDataset(
        "wikibio", "wikibio", wikibio.provision, {"ensemble": Combination("response", members)}
    )
    assert cell(ensemble, on_wikibio, METHODS).reason == f"member sac3/sac3_q: {SAC3_OUTPUTS.reason}"
    # every member applies on FactualBio, but SelfCheck-NLI writes no claim units to combine
    at_claims = BenchmarkDataset(
        "factualbio",
        "factualbio",
        factualbio.provision,
        {"ensemble": Combination("claim", (Member("ccp", "maxprob"), Member("selfcheck_nli", "nli")))},
    )
    assert cell(ensemble, at_claims, METHODS).reason == "member selfcheck_nli/nli scores no claim units"
    # its members all apply, but the data set labels no unit of the level it combines
    at_prompts = BenchmarkDataset(
        "factualbio", "factualbio", factualbio.provision, {"ensemble": Combination("response", members[:1])}
    )
    assert cell(ensemble, at_prompts, METHODS).reason == "no labels at the response level"


def test_a_new_method_adds_its_row_from_its_declaration_alone(datasets: tuple[BenchmarkDataset, ...]) -> None:
    """A throw-away method, added to the registry's methods: no edit of the rule gives its row."""
    oracle = Need("oracle", "needs an oracle of the truth")
    first = MethodSpec("oracle_check", "Oracle", "none", "none", "sentence", needs=(PROMPTS, oracle))
    only_facts = MethodSpec("fact_lengths", "Facts", "none", "none", "fact")
    methods = {**METHODS, first.name: first, only_facts.name: only_facts}
    found = {(c.method, c.dataset): c for c in applicability(methods, datasets)}
    assert len(found) == len(methods) * len(BENCHMARK)
    # WikiBio has no prompts: the first unmet need speaks; elsewhere the oracle does
    assert found["oracle_check", "wikibio"].reason == PROMPTS.reason
    for name in BENCHMARK[:-1]:
        assert found["oracle_check", name].reason == "needs an oracle of the truth"
        # a method's own facts are labelled by no data set (evaluation.levels)
        assert found["fact_lengths", name].reason == "no labels at the fact level"


def test_evaluated_levels_add_passages_only_from_sentences() -> None:
    wikibio = dataset_spec("wikibio").provision
    assert evaluated_levels(("sentence",), wikibio) == ("sentence", "passage")
    assert evaluated_levels(("response",), wikibio) == ()
    assert evaluated_levels(("claim", "sentence", "response"), dataset_spec("factualbio").provision) == (
        "claim",
        "sentence",
        "passage",
    )
    assert evaluated_levels(("sentence", "response"), dataset_spec("sac3").provision) == ("response",)


def test_a_cell_has_levels_or_a_reason() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Cell("m", "d")
    with pytest.raises(ValueError, match="exactly one"):
        Cell("m", "d", levels=("sentence",), reason="why")


def _evaluated(metrics: dict[str, dict[str, float | None]]) -> set[str]:
    """The levels at which some variant got a defined metric, by the metric keys' owners."""
    owner = {key: "passage" if key.startswith("passage_") else "sentence" for key in METRIC_KEYS}
    owner.update({key: level for level, keys in LEVEL_METRICS.items() for key in keys})
    return {owner[k] for values in metrics.values() for k, v in values.items() if v is not None and not math.isnan(v)}


RESULTS = sorted(
    path
    for path in (REPO / "results").glob("*/*.json")
    if path.parent.name in BENCHMARK and path.name.split(".")[0] != "correction_20"
)


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_committed_result_is_evaluated_where_the_rule_says(
    path: Path, cells: dict[tuple[str, str], Cell]
) -> None:
    """The published runs on the real data sets (results/): each method was evaluated only at
    levels its cell lists, and never where the cell says n/a."""
    result = json.loads(path.read_text(encoding="utf-8"))
    if result["method"] not in METHODS:
        pytest.skip(f"{result['method']} is not a method (a correction table)")
    found = cells[result["method"], path.parent.name]
    assert found.applies, f"{path.name}: evaluated, but the cell says n/a: {found.reason}"
    assert _evaluated(result["metrics"]) <= set(found.levels)


def test_results_cover_the_claims_cells_and_passages() -> None:
    """The check above has the hard cases to hold: a fact-level method at sentence and claim
    level, a claim-level one at sentences, a sentence-level one at response level."""
    names = {f"{p.parent.name}/{p.stem}" for p in RESULTS}
    assert {"factualbio/factselfcheck", "factualbio/ccp", "nq_open/selfcheck_ngram_100"} <= names


@pytest.mark.parametrize(
    "spec",
    [s for s in METHODS.values() if s.combines is None and (REPO / f"metrics/toy/{s.name}.json").is_file()],
    ids=lambda s: s.name,
)
def test_the_toy_run_evaluated_sentences_exactly_for_the_methods_that_declare_them(spec: MethodSpec) -> None:
    """The toy set labels sentences (and so passages) only: the committed toy metrics hold
    sentence metrics exactly for the methods whose declared levels include sentences."""
    metrics = json.loads((REPO / f"metrics/toy/{spec.name}.json").read_text(encoding="utf-8"))
    assert ("sentence" in _evaluated(metrics)) == ("sentence" in spec.scored_levels)
