"""`hallulab plan`: the model work of the expensive stages before a run, counted on the records
(or scaled to --responses new ones), with the call cache's hits found under the very keys the
stages store their replies by."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from hallulab.core.call_cache import CallCache
from hallulab.core.config import compose, typed
from hallulab.data.loaders import load_jsonl_records
from hallulab.generation import GenerateKnobs, generate_records
from hallulab.llm import build_llm
from hallulab.llm.cached import CachedLLM
from hallulab.plan import Rates, bench_rates, make_plan, plan_generate
from tests.conftest import TOY, ToyRun, wikibio_available
from tests.helpers.scripted_server import ScriptedServer, chat_ok
from tests.workspace import BIN, environment

RATES = Rates(
    llm_tokens_per_second=100.0, nli_pairs_per_second=10.0, prompt_verdicts_per_second=2.0, endpoints=2, source="stated"
)


def test_the_toy_plan_counts_every_sentence_sample_pair_and_no_generation() -> None:
    records = load_jsonl_records(TOY)
    pairs = sum(len(p.sentences) * len(p.samples) for p in records if p.response is not None)
    plan = make_plan("toy", rates=RATES, use_cache=False)
    stages = {s.stage: s for s in plan.stages}
    assert stages["generate"].count == 0  # every toy record carries its samples (generate.mode=auto)
    assert stages["score_selfcheck_nli"].count == pairs and stages["score_selfcheck_nli"].cached is None
    assert stages["score_selfcheck_nli"].seconds == pytest.approx(stages["score_selfcheck_nli"].distinct / 10.0)
    prompt = stages["score_selfcheck_prompt"]
    assert prompt.count == pairs and prompt.seconds == pytest.approx(pairs / (2.0 * 2))
    assert "score_hallucheck" in plan.not_planned


def test_regenerating_counts_n_max_requests_per_record_and_bounds_their_tokens() -> None:
    plan = make_plan("toy", ["generate.mode=samples", "generate.samples_to_draw=3"], rates=RATES, use_cache=False)
    generate = next(s for s in plan.stages if s.stage == "generate")
    records = len(load_jsonl_records(TOY))
    assert generate.count == records * 3 and generate.max_tokens == records * 3 * 256
    assert generate.seconds == pytest.approx(generate.max_tokens / (100.0 * 2))


def test_a_planned_run_of_new_responses_scales_the_data_sets_means() -> None:
    records = load_jsonl_records(TOY)
    mean_sentences = sum(len(p.sentences) for p in records) / len(records)
    plan = make_plan("toy", ["generate.samples_to_draw=4"], responses=1000, rates=RATES)
    stages = {s.stage: s for s in plan.stages}
    assert stages["generate"].count == 4000 and stages["generate"].cached is None
    assert stages["score_selfcheck_nli"].count == round(1000 * mean_sentences * 4)


def test_the_plan_finds_the_generate_stages_replies_under_their_own_keys(tmp_path: Path) -> None:
    """The generate stage's work against a real local server, then the plan of the same run:
    every request is found in the cache; one more sample per record is not."""
    records = load_jsonl_records(TOY)[:3]
    overrides = ["generate.mode=samples", "generate.samples_to_draw=2", "llms.generator=llamacpp_server"]
    with ScriptedServer(lambda body, i: chat_ok(f"sample {i}")) as server, CallCache(tmp_path / "c.sqlite") as cache:
        overrides.append(f"llm_catalogue.llamacpp_server.base_url='{server.url}'")
        params = compose(["dataset=toy", *overrides])
        cfg = typed(GenerateKnobs, params["generate"], "generate")
        llm = CachedLLM(build_llm(params["llm_catalogue"]["llamacpp_server"]), cache)
        generate_records(records, llm, cfg, lambda texts: [[t] for t in texts])
        assert plan_generate(records, params, cache, None, RATES).cached == 6
        more = compose(["dataset=toy", *overrides[:1], "generate.samples_to_draw=3", *overrides[2:]])
        planned = plan_generate(records, more, cache, None, RATES)
        assert (planned.count, planned.cached) == (9, 6)


def test_the_bench_rates_are_the_recorded_ones() -> None:
    results = json.loads(Path("perf/results.json").read_text())
    rates = bench_rates()
    nli = next(r for r in results["nli"]["rows"] if r["key"] == "fp32")
    assert rates.nli_pairs_per_second == nli["value"] and rates.endpoints == 1


@pytest.mark.slow
def test_after_the_toy_run_the_plan_finds_every_nli_pair_in_the_cache(toy_run: ToyRun) -> None:
    """score_selfcheck_nli ran in the toy run: the plan of the same run looks its pairs up under
    the NLI model's keys and finds them all, so its NLI time is nil."""
    done = subprocess.run(
        [str(BIN / "hallulab"), "plan", "--dataset", "toy", "-o", "plan/toy"],
        cwd=toy_run.root,
        env=environment(),
        capture_output=True,
        text=True,
        check=True,
    )
    plan = json.loads((toy_run.root / "plan/toy.json").read_text())
    nli = next(s for s in plan["stages"] if s["stage"] == "score_selfcheck_nli")
    assert nli["distinct"] > 0 and nli["cached"] == nli["distinct"] and nli["seconds"] == 0, done.stdout


def test_the_published_plan_is_what_its_command_writes(tmp_path: Path) -> None:
    """docs/how-to/scale.md's plan for 10^5 responses (perf/plans/wikibio_100000.*) is what
    `hallulab plan --dataset wikibio --responses 100000 -o ...` writes from the committed
    bench rates and the WikiBio records."""
    if not wikibio_available():
        pytest.skip("the WikiBio local copy is not under the data root")
    out = tmp_path / "wikibio_100000"
    subprocess.run(
        [str(BIN / "hallulab"), "plan", "--dataset", "wikibio", "--responses", "100000", "-o", str(out)],
        env=environment(),
        check=True,
        capture_output=True,
    )
    for suffix in (".json", ".md"):
        published = Path("perf/plans/wikibio_100000").with_suffix(suffix)
        assert out.with_suffix(suffix).read_text() == published.read_text(), suffix


def test_the_plan_shows_each_methods_cost_as_the_detector_table_measured_it() -> None:
    """The chained methods cannot be counted before a run; their measured cost per 1,000 units
    is read from the committed table and scaled to the planned responses by the cell's units
    per record (a method without a cell, or another data set's, is left out)."""
    from hallulab.benchmark.table_costs import cell_costs, cost_lines

    cost = {
        "complete": False,
        "seconds": 200.0,
        "stage_seconds": 200.0,
        "model_calls": 3000.0,
        "requests": {"NLI pairs": {"calls": 3000.0}},
    }
    table = {
        "columns": {
            "wikibio": {
                "rows": {
                    "ccp/ccp_a": {"level": "claim", "units": 400, "records": 100, "cost": cost},
                    "ccp/ccp_b": {
                        "level": "claim",
                        "units": 1,
                        "records": 1,
                        "cost": cost,
                    },  # the method's first row counts
                    "length/length_tokens": {"level": "claim", "units": 400, "records": 100, "cost": None},
                }
            }
        }
    }
    (ccp,) = cell_costs(table, "wikibio", responses=1000)
    assert (ccp.cell, ccp.level, ccp.units, ccp.complete) == ("ccp/ccp_a", "claim", 400, False)
    assert ccp.seconds == 200.0 * 4 * 1000 / 1000  # 4 units per record, 1,000 responses
    assert ccp.requests == {"NLI pairs": 3000.0}
    assert cell_costs(table, "wikibio", 1000, methods=["selfcheck_nli"]) == []
    assert cell_costs(table, "nq_open", 1000) == []
    lines = cost_lines([ccp], "wikibio")
    assert lines[-1] == "| ccp | ccp/ccp_a | claim | 200.0 (partial: a lower bound) | NLI pairs 3,000 | 0.22 |"
    cached = replace(ccp, complete=True, cached_percent=2.8)  # an earlier run had computed some of its calls
    # its cached calls are in the figure at their recorded seconds: not a lower bound for that
    noted = "200.0 (2.8% of the calls from the call cache, at their recorded seconds)"
    assert cost_lines([cached], "wikibio")[-1].split(" | ")[3] == noted
    assert "results/benchmark/wikibio/<method>.cost.json" in lines[1]


def test_the_plan_shows_an_ensembles_cost_with_its_members_cells() -> None:
    from hallulab.benchmark.table_costs import cell_costs
    from hallulab.benchmark.table_file import with_members

    figures = {"seconds": 300.0, "stage_seconds": 300.0, "cached_seconds": 0.0}
    member = {"complete": True, **figures, "model_calls": 1000.0, "model_seconds": 250.0}
    member["requests"] = {"proxy LLM (smollm2)": {"calls": 1000.0, "model_seconds": 250.0}}
    own = {"complete": True, "seconds": 20.0, "stage_seconds": 20.0, "cached_seconds": 0.0}
    own |= {"model_calls": 0.0, "model_seconds": 0.0, "requests": {}}
    cost = with_members(own, ("greybox",), {"greybox": member})
    row = {"level": "response", "units": 100, "records": 100, "cost": cost}
    table = {"columns": {"nq_open": {"rows": {"ensemble/rank_mean": row}}}}
    (found,) = cell_costs(table, "nq_open", responses=1000)
    assert found.cell == "ensemble/rank_mean with its members' cells" and found.complete
    assert found.seconds_per_1000_units == 320.0 and found.seconds == 320.0
    assert found.requests == {"proxy LLM (smollm2)": 1000.0}
