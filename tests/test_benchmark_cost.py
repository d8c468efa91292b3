"""A benchmark cell's cost (hallulab.benchmark.cost): read from the logs of the stages that ran
in the cell's own run; a stage whose outputs DVC found current is named and not counted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hallulab.benchmark.cost import CellCost, StageCost, cell_cost, read_cell_cost, write_cell_cost
from hallulab.benchmark.render import cost_text, shared_generation_text, whole_table_text
from hallulab.benchmark.statistics import CellStatistics
from hallulab.benchmark.table_file import (
    Entry,
    member_methods,
    per_thousand_units,
    shared_generation,
    whole_table,
    with_members,
)
from hallulab.core.call_cache import RequestCost
from hallulab.core.config import ConfigError
from hallulab.pipeline import registry

STARTED = 1_000_000.0
CACHED = "of the calls from the call cache, at their recorded seconds"


def _log(root: Path, stage: str, finished: float, seconds: float, requests: dict[str, dict[str, float]]) -> None:
    path = root / "logs/nq_open" / f"{stage}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    cache = {"hits": 0, "misses": 0, "requests": requests}
    path.write_text(json.dumps({"stage": stage, "finished": finished, "seconds": seconds, "cache": cache}))


def test_a_cells_cost_counts_the_stages_of_its_own_run_and_names_the_others(tmp_path: Path) -> None:
    llm = {"generator LLM (smollm2)": {"calls": 40, "computed": 10, "model_seconds": 8.0}}
    nli = {"NLI pairs": {"calls": 300, "computed": 300, "model_seconds": 3.5}}
    _log(tmp_path, "generate", STARTED - 50, 99.0, llm)  # an earlier run's: not this cell's cost
    _log(tmp_path, "extract_sentences", STARTED + 1, 2.0, {})
    _log(tmp_path, "extract_claims", STARTED + 2, 1.0, llm)
    _log(tmp_path, "score_ccp", STARTED + 3, 20.0, nli)
    _log(tmp_path, "aggregate_ccp", STARTED + 4, 0.5, {})
    found = cell_cost("ccp", "nq_open", STARTED, 42.0, tmp_path)
    write_cell_cost(tmp_path / "cell.cost.json", found)
    cost = read_cell_cost(tmp_path / "cell.cost.json")  # through its file
    assert cost.to_dict() == found.to_dict()
    assert not cost.stages["generate"].ran
    assert not cost.stages["extract_response_tokens"].ran  # no log at all
    assert cost.complete is False and cost.wall_seconds == 42.0  # extract_response_tokens did not run
    assert cost.stage_seconds == pytest.approx(23.5)  # generate (shared, and not this run's) aside
    assert cost.requests["generator LLM (smollm2)"].as_dict() == {"calls": 40, "computed": 10, "model_seconds": 8.0}
    assert cost.requests["NLI pairs"].calls == 300
    assert cost.machine["cpus"] >= 1
    (tmp_path / "cell.cost.json").write_text('{"machine": {}}')
    with pytest.raises(ConfigError, match=r"cell.cost.json: not a cell cost record"):
        read_cell_cost(tmp_path / "cell.cost.json")

    scaled = per_thousand_units(cost, 200)
    assert scaled is not None
    assert scaled["stage_seconds"] == pytest.approx(117.5) and scaled["model_calls"] == pytest.approx(1700.0)
    assert scaled["requests"]["NLI pairs"] == {"calls": 1500.0, "model_seconds": 17.5}
    assert scaled["cached_percent"] == pytest.approx(8.8)  # 30 of the own stages' 340 calls were cached
    # the 30 cached of extract_claims' 40 calls took 30/40 of its 8.0 recorded model seconds
    assert scaled["cached_seconds"] == pytest.approx(5 * 6.0) and scaled["seconds"] == pytest.approx(117.5 + 30.0)
    assert cost_text(scaled) == f"147.5 s, 1,700 calls (partial; 8.8% {CACHED})"
    assert cost_text({**scaled, "cached_percent": 0.0}) == "147.5 s, 1,700 calls (partial)"
    assert per_thousand_units(None, 200) is None and cost_text(None) == "–"


def test_a_cell_whose_stages_all_ran_is_complete(tmp_path: Path) -> None:
    llm = {"generator LLM (smollm2)": {"calls": 200, "computed": 200, "model_seconds": 90.0}}
    _log(tmp_path, "generate", STARTED, 100.0, llm)
    _log(tmp_path, "aggregate_length", STARTED + 1, 1.0, {})
    cost = cell_cost("length", "nq_open", STARTED, 5.0, tmp_path)
    # generate's samples are drawn for every method of the data set: not the length baseline's cost
    assert cost.complete is True and cost.requests == {} and cost.stage_seconds == 1.0
    assert cost.stages["generate"].seconds == 100.0


def test_an_ensembles_cost_leaves_out_its_members_copy_step(tmp_path: Path) -> None:
    # the members step copies the member cells' scores and writes no run log: it is not a stage
    # the ensemble's cell could have skipped
    _log(tmp_path, "aggregate_ensemble", STARTED + 1, 1.5, {})
    cost = cell_cost("ensemble", "nq_open", STARTED, 3.0, tmp_path)
    assert "members_ensemble" not in cost.stages and cost.complete is True and cost.stage_seconds == 1.5
    listed = {**cost.to_dict()["stages"], "members_ensemble": {"ran": False}}  # as an older file lists it
    assert CellCost.from_dict({**cost.to_dict(), "stages": listed}).complete is True
    assert (
        CellCost.from_dict({**cost.to_dict(), "stages": {**listed, "aggregate_ensemble": {"ran": False}}}).complete
        is False
    )


def _cell(wall: float, stages: dict[str, StageCost]) -> CellCost:
    return CellCost({"cpus": 2}, wall, stages)


def test_the_whole_table_sums_each_cell_once_and_names_the_stages_no_cell_ran() -> None:
    llm = {"generator LLM (smollm2)": RequestCost(40, 10, 8.0)}  # 30 cached calls: 6.0 recorded s
    cells = {
        "nq_open": [
            _cell(
                20.0,
                {
                    "generate": StageCost(True, 5.0),
                    "extract_sentences": StageCost(True, 2.0),
                    "score_ccp": StageCost(True, 10.0, llm),
                },
            ),
            _cell(4.0, {"extract_sentences": StageCost(False), "aggregate_length": StageCost(True, 1.0)}),
        ],
        "hotpotqa": [_cell(7.0, {"extract_atomic_facts": StageCost(False), "score_hallucheck": StageCost(True, 3.0)})],
    }
    drawn = StageCost(True, 10.0, {"generator LLM (smollm2)": RequestCost(105, 21, 300.0)})  # 84 cached: 240 s
    total = whole_table(cells, [drawn])
    assert total["stage_seconds"] == pytest.approx(16.0) and total["cached_seconds"] == pytest.approx(6.0)
    assert total["generate_seconds"] == pytest.approx(250.0) and total["seconds"] == pytest.approx(272.0)
    assert total["wall_seconds"] == pytest.approx(31.0) and total["cells"] == 3 and total["cpus"] == [2]
    # nq_open's second cell skipped the sentences the first one's run made; nobody ran hotpotqa's facts
    assert total["partial"] == 2 and total["uncounted"] == ["hotpotqa/extract_atomic_facts"]
    text = whole_table_text(total)
    assert (
        text.startswith("**The whole table**: its 3 filled cells")
        and "come to 0.1 h with an empty call cache on 2" in text
    )
    assert "2 of them skipped a stage another cell's run had made" in text
    assert text.endswith(
        "A lower bound: no cell's run made `hotpotqa/extract_atomic_facts` (an earlier run outside the table did)."
    )
    complete = whole_table({"nq_open": cells["nq_open"][:1]}, [])
    assert (
        complete["partial"] == 0 and "lower bound" not in whole_table_text(complete) and complete["seconds"] == 18.0
    )  # generate is not a cell's own
    assert whole_table_text(None) == "" and whole_table_text(whole_table({}, [])) == ""


def _generated(seconds: float, computed: int) -> CellCost:
    calls = {"generator LLM (smollm2)": RequestCost(105, computed, 300.0)}
    return CellCost({}, seconds, {"generate": StageCost(True, seconds, calls)})


def test_the_shared_generation_cost_is_the_run_that_drew_the_samples_not_a_cache_hit() -> None:
    entry = Entry(CellStatistics("sentence", 80, 20, 30, {}))
    costs = {
        "greybox/max_neglogp": _generated(2.0, 0),
        "ccp/ccp": _generated(320.0, 105),
        "later/tie": _generated(330.0, 105),
    }
    found = shared_generation(costs, dict.fromkeys(costs, entry))
    # the first cell's run found all 105 calls in the call cache: the second cell's drew them
    assert found is not None and found["cell"] == "ccp/ccp"
    assert found["stage_seconds"] == pytest.approx(16000.0) and found["model_calls"] == pytest.approx(5250.0)
    assert shared_generation_text(found) == "16,000.0 s, 5,250 calls"
    partly_cached = {"only/run": _generated(10.0, 21)}  # 84 of its 105 calls were cache hits
    found = shared_generation(partly_cached, dict.fromkeys(partly_cached, entry))
    assert found is not None and found["cached_percent"] == 80.0
    # its 10 s plus the 84 cached calls' share of the 300 recorded model seconds, per 1,000 records
    assert found["stage_seconds"] == pytest.approx(500.0) and found["seconds"] == pytest.approx(50 * (10.0 + 240.0))
    assert shared_generation_text(found) == f"12,500.0 s, 5,250 calls (80% {CACHED})"
    assert shared_generation({"greybox/max_neglogp": CellCost({}, 1.0, {})}, {"greybox/max_neglogp": entry}) is None


def _per_thousand(seconds: float, calls: int, complete: bool = True) -> dict[str, object]:
    figures = {"seconds": seconds, "stage_seconds": seconds, "cached_seconds": 0.0}
    return {"complete": complete, **figures, "model_calls": calls, "model_seconds": seconds / 2}


def test_a_combining_cell_adds_its_members_cells_to_its_own_cost() -> None:
    params = {
        "ensemble": {
            "members": [
                {"method": "selfcheck_ngram", "variant": "ngram_n1_max"},
                {"method": "ccp", "variant": "maxprob"},
                {"method": "ccp", "variant": "ptrue"},
            ]
        }
    }
    ensemble = registry.methods()["ensemble"]
    members = member_methods(ensemble, params, "results/x/benchmark_ensemble.json")
    assert members == ("selfcheck_ngram", "ccp")
    own = _per_thousand(20.0, 0, complete=False)  # its copy stage was current: a lower bound
    costs = {"selfcheck_ngram": _per_thousand(300.0, 0), "ccp": _per_thousand(9000.0, 40000)}
    found = with_members(own, members, costs)
    assert found is not None
    assert found["stage_seconds"] == 20.0  # its own figures stay as they are
    added = found["members"]
    assert added["stage_seconds"] == pytest.approx(9320.0) and added["model_calls"] == pytest.approx(40000.0)
    assert added["missing"] == [] and added["complete"] is True
    assert cost_text(found) == "20.0 s, 0 calls (partial); with its members' cells 9,320.0 s, 40,000 calls"
    partial_member = with_members(own, members, {**costs, "ccp": _per_thousand(9000.0, 40000, complete=False)})
    assert partial_member is not None and partial_member["members"]["complete"] is False
    without_ccp = with_members(_per_thousand(20.0, 0), members, {"selfcheck_ngram": costs["selfcheck_ngram"]})
    assert without_ccp is not None and without_ccp["members"]["missing"] == ["ccp"]
    assert cost_text(without_ccp) == "20.0 s, 0 calls; with its members' cells 320.0 s, 0 calls (partial)"
    whole = with_members(_per_thousand(20.0, 0), ("selfcheck_ngram",), costs)
    assert whole is not None and cost_text(whole) == "20.0 s, 0 calls; with its members' cells 320.0 s, 0 calls"
    # a member whose run found 10% of its 40,000 calls in the call cache: 4,000 of the 40,000 summed
    resumed = with_members(_per_thousand(20.0, 0), members, {**costs, "ccp": {**costs["ccp"], "cached_percent": 10.0}})
    assert resumed is not None and resumed["members"]["cached_percent"] == pytest.approx(10.0)
    assert cost_text(resumed).endswith(f"9,320.0 s, 40,000 calls (10% {CACHED})")
    with pytest.raises(ConfigError, match=r"ensemble\.members"):
        member_methods(ensemble, {"ensemble": {}}, "results/x/benchmark_ensemble.json")


def test_the_changelog_states_the_whole_table_time_the_committed_table_file_holds() -> None:
    """The one figure the changelog states (what filling the whole table takes on a 2-core CPU)
    is the committed table file's ``total``: a table re-filled without re-stating it is seen."""
    root = Path(__file__).resolve().parents[1]
    total = json.loads((root / "results" / "benchmark.json").read_text(encoding="utf-8"))["total"]
    changelog = " ".join((root / "CHANGELOG.md").read_text(encoding="utf-8").split())
    stated = re.search(
        r"Filling the whole table \(`make benchmark`, (\d+) cells, with the embedded models\) takes"
        r" ([\d.,]+) h with an empty call cache on a (\d+)-core CPU(, a lower bound)?",
        changelog,
    )
    assert stated, "CHANGELOG.md does not state the whole table's time"
    assert int(stated[1]) == total["cells"]
    assert stated[2] == f"{total['seconds'] / 3600:,.1f}"
    assert [int(stated[3])] == total["cpus"]
    assert bool(stated[4]) == bool(total["uncounted"])
