"""A cell that measures the model behind its method's LLM role rather than the method
(hallulab.benchmark.validity, hallulab.pipeline.role_checks): its flat share from its units
file, the role checks its method declares read from its results file's diagnostics, the verdict
and the reason in words; a model-limited cell is never a column's best, and every rendering of
the table marks it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hallulab.benchmark import table_file
from hallulab.benchmark.render import LIMITED_MARK, best_table, cell_text, model_limited_note, verdict_lines
from hallulab.benchmark.table import TableCell, TableRow
from hallulab.benchmark.table_file import column_entries
from hallulab.benchmark.units import CellUnits, read_units, write_units
from hallulab.benchmark.validity import (
    FLAT_SHARE_BOUND,
    MODEL_LIMITED,
    ROLE_SUCCESS_BOUND,
    VALID,
    bounds,
    cell_verdict,
)
from hallulab.core.config import ConfigError
from hallulab.evaluation.protocol import ProtocolKnobs
from hallulab.pipeline import registry
from hallulab.pipeline.role_checks import AnswerSpread, Count, RoleCheck
from hallulab.pipeline.spec import MethodSpec
from hallulab.results.published import load_result

REPO = Path(__file__).resolve().parents[1]
CFG = ProtocolKnobs()
POSITIVE = [True, False] * 10
PROMPT = registry.methods()["selfcheck_prompt"].role_checks
MQAG = registry.methods()["selfcheck_mqag"].role_checks


def _units(variant: str, scores: list[float], positive: list[bool] = POSITIVE) -> CellUnits:
    count = len(scores)
    return CellUnits(
        "response",
        variant,
        tuple(f"r-{i}" for i in range(count)),
        (0,) * count,
        np.asarray(positive[:count], dtype=bool),
        np.asarray(scores, dtype=np.float64),
    )


def _planted(tmp_path: Path, units: dict[str, CellUnits]) -> dict[str, CellUnits]:
    """The units as a cell keeps them: written to a units file and read back."""
    path = tmp_path / "cell.units.csv"
    write_units(path, "response", units)
    return read_units(path)


def test_a_flat_verdict_and_an_evaluator_that_always_says_no_make_a_cell_model_limited(tmp_path: Path) -> None:
    found = _planted(tmp_path, {"prompt": _units("prompt", [1.0] * 18 + [0.5, 0.0])})["prompt"]
    diagnostics = {"pairs": 6880, "verdicts": {"replies": 6880, "yes": 0, "no": 6880, "other": 0}}
    verdict = cell_verdict(found, PROMPT, diagnostics, "results/x/benchmark_selfcheck_prompt.json")
    assert verdict.verdict == MODEL_LIMITED and verdict.flat.share == pytest.approx(0.9)
    assert verdict.reason == "1.0 on 18 of 20 responses; the evaluator replied No to 6,880 of 6,880 pairs"
    written = verdict.to_dict()
    assert written["flat_share"] == 0.9 and written["flat_score"] == 1.0 and written["verdict"] == "model-limited"
    assert written["roles"] == [
        {"role": "evaluator", "label": "replies parsed as Yes or No", "succeeded": 6880, "of": 6880, "rate": 1.0},
        {
            "role": "evaluator",
            "label": "answers other than its most common (No)",
            "succeeded": 0,
            "of": 6880,
            "rate": 0.0,
        },
    ]


def test_a_role_that_mostly_fails_makes_a_cell_model_limited_whatever_its_spread(tmp_path: Path) -> None:
    spread = [i / 20 for i in range(20)]  # no two units alike: flat share 1 in 20
    found = _planted(tmp_path, {"mqag_bayes_with_alpha": _units("mqag_bayes_with_alpha", spread)})
    diagnostics = {"g1_replies": 1720, "g1_unparsed_skipped": 1414, "questions_valid": 306}  # no option padded
    verdict = cell_verdict(found["mqag_bayes_with_alpha"], MQAG, diagnostics, "results/x/benchmark_selfcheck_mqag.json")
    assert verdict.flat.share == pytest.approx(0.05) and not verdict.flat.limited
    assert verdict.verdict == MODEL_LIMITED
    assert verdict.reason == "1,414 of 1,720 generated questions could not be parsed"
    assert [(r.succeeded, r.of) for r in verdict.roles] == [(306, 1720), (306, 306)]  # a counter's zero left out


def test_a_cell_with_spread_scores_and_working_roles_is_valid_and_says_so() -> None:
    diagnostics = {"verdicts": {"replies": 100, "yes": 40, "no": 55, "other": 5}}
    verdict = cell_verdict(_units("prompt", [0.0, 1.0] * 10), PROMPT, diagnostics, "here")
    assert verdict.verdict == VALID and verdict.flat.share == pytest.approx(0.5)
    assert verdict.reason == (
        "most common score 0.0 on 10 of 20 responses; replies parsed as Yes or No: 95 of 100;"
        " the evaluator replied No to 55 of 100 pairs (its most common answer)"
    )
    # the format-free reading reads no reply: the evaluator's checks do not judge it
    pno = cell_verdict(_units("prompt_pno", [0.9] * 20), PROMPT, {}, "here")
    assert pno.roles == () and pno.verdict == MODEL_LIMITED and pno.reason == "0.9 on 20 of 20 responses"


def test_the_bounds_are_where_the_rule_says() -> None:
    assert FLAT_SHARE_BOUND == 0.8  # the cases below sit on either side of it
    at_bound = [1.0] * 8 + [0.2, 0.3]
    assert cell_verdict(_units("v", at_bound), (), {}, "here").verdict == MODEL_LIMITED
    below = [1.0] * 7 + [0.2, 0.3, 0.4]
    assert cell_verdict(_units("v", below), (), {}, "here").verdict == VALID
    check = RoleCheck(role="qa", label="parsed", succeeded="ok", of="all", failed="not parsed")
    half = round(ROLE_SUCCESS_BOUND * 100)
    spread = [0.1 * i for i in range(20)]
    assert cell_verdict(_units("v", spread), (check,), {"ok": half, "all": 100}, "here").verdict == VALID
    assert cell_verdict(_units("v", spread), (check,), {"ok": half - 1, "all": 100}, "here").verdict == MODEL_LIMITED
    assert bounds() == {"flat_share_at_least": FLAT_SHARE_BOUND, "role_success_below": ROLE_SUCCESS_BOUND}


def test_a_results_file_without_the_counts_a_check_reads_is_named() -> None:
    where = "results/x/benchmark_selfcheck_prompt.json"
    with pytest.raises(ConfigError, match=f"{where}: diagnostics has no 'verdicts.replies'"):
        cell_verdict(_units("prompt", [0.0, 1.0] * 10), PROMPT, {"pairs": 10}, where)
    with pytest.raises(ConfigError, match="not a whole number"):
        Count.parse("a.b").read({"a": {"b": "many"}}, "here")


def test_a_count_reads_sums_and_differences_of_dotted_paths() -> None:
    count = Count.parse("decision_paths.ner/generator/greedy.passed + x - y.z")
    assert count == Count(("decision_paths.ner/generator/greedy.passed", "x"), ("y.z",))
    assert str(count) == "decision_paths.ner/generator/greedy.passed + x - y.z"
    diagnostics = {"decision_paths": {"ner/generator/greedy": {"passed": 7}}, "x": 3, "y": {"z": 4}}
    assert count.read(diagnostics, "here") == 6 and count.found(diagnostics)
    assert not Count.parse("absent").found(diagnostics)
    with pytest.raises(ValueError, match="not dotted keys"):
        Count.parse("a +")


def test_a_method_declares_checks_of_its_own_roles_and_shown_variants_only() -> None:
    spec = registry.methods()["selfcheck_prompt"]
    fields = {name: getattr(spec, name) for name in ("name", "title", "paper", "section", "level")}
    fields |= {"raw": spec.raw, "score": spec.score, "calls": spec.calls, "benchmark_variants": ("prompt",)}
    other_role = RoleCheck(role="judge", label="x", succeeded="a", of="b", failed="y")
    with pytest.raises(ValueError, match="'judge', not one of its roles"):
        MethodSpec(**fields, role_checks=(other_role,))
    unshown = RoleCheck(role="evaluator", label="x", succeeded="a", of="b", failed="y", variants=("other",))
    with pytest.raises(ValueError, match=r"variants \['other'\]"):
        MethodSpec(**fields, role_checks=(unshown,))
    with pytest.raises(ValueError, match="at least two answers"):
        AnswerSpread(role="evaluator", answers=(("No", "n"),), of="all", noun="pairs")


def test_a_model_limited_cell_is_never_a_columns_best() -> None:
    perfect = _units("flat", [float(p) for p in POSITIVE])  # ranks perfectly, but judged model-limited
    noisy = _units("noisy", list(np.random.default_rng(5).random(20)))
    verdicts = {
        "a/flat": cell_verdict(perfect, (), {}, "here"),  # flat share 0.5: valid by its units
        "b/noisy": cell_verdict(noisy, (), {}, "here"),
    }
    check = RoleCheck(role="qa", label="parsed", succeeded="ok", of="all", failed="not parsed")
    limited = {**verdicts, "a/flat": cell_verdict(perfect, (check,), {"ok": 1, "all": 10}, "here")}
    units = {"a/flat": perfect, "b/noisy": noisy}
    assert column_entries(units, [], CFG, verdicts).best["response"]["roc_auc"] == "a/flat"
    column = column_entries(units, [], CFG, limited)
    assert column.best == {"response": {"roc_auc": "b/noisy", "pr_auc": "b/noisy", "prr": "b/noisy"}}
    assert column.entries["a/flat"].vs_best["roc_auc"].row == "b/noisy"  # still compared with the best
    assert column.entries["a/flat"].to_dict()["verdict"] == MODEL_LIMITED
    alone = column_entries({"a/flat": perfect}, [], CFG, {"a/flat": limited["a/flat"]})
    assert alone.best == {"response": {"roc_auc": None, "pr_auc": None, "prr": None}}


def _committed() -> dict:
    return json.loads((REPO / table_file.TABLE_FILE).read_text(encoding="utf-8"))


def test_the_committed_table_judges_every_cell_and_chooses_no_model_limited_best() -> None:
    committed = _committed()
    assert committed["protocol"]["model_limited"] == bounds()
    limited = []
    for dataset, column in committed["columns"].items():
        chosen = {key for best in column["best"].values() for key in best.values()}
        for key, entry in column["rows"].items():
            assert entry["verdict"] in (VALID, MODEL_LIMITED) and entry["reason"], (dataset, key)
            assert 0 < entry["flat_share"] <= 1, (dataset, key)
            if entry["verdict"] == MODEL_LIMITED:
                limited.append(f"{dataset}/{key}")
                assert key not in chosen, (dataset, key)
    assert "wikibio/selfcheck_prompt/prompt" in limited and "wikibio/selfcheck_ngram/ngram_n1_max" not in limited


def test_the_flat_bound_is_above_every_columns_larger_class() -> None:
    """A perfect binary detector's flat share is its column's larger class's share: the bound
    must stay above it in every column and level of the committed table, or it would flag one."""
    for dataset, column in _committed()["columns"].items():
        for key, entry in column["rows"].items():
            rate = entry["positives"] / entry["units"]
            assert max(rate, 1 - rate) < FLAT_SHARE_BOUND, (dataset, key, rate)


def test_every_declared_check_reads_every_committed_cell_of_its_method() -> None:
    for name, spec in registry.methods().items():
        for path in sorted((REPO / "results").glob(f"*/benchmark_{name}.json")):
            diagnostics = load_result(path).diagnostics
            for check in spec.role_checks:
                reading = check.read(diagnostics, str(path))
                assert 0 <= reading.succeeded <= reading.of, (path, check)


def test_the_renderings_mark_a_model_limited_cell_and_say_why() -> None:
    entry = {
        "level": "response",
        "metrics": {"roc_auc": [50.0, 50.0, 50.0]},
        "vs_best": {"roc_auc": {"verdict": "worse"}},
        "vs_baseline": {},
        "verdict": MODEL_LIMITED,
        "reason": "1.0 on 20 of 20 responses",
    }
    assert cell_text(entry, "roc_auc", "b/v", "a/v", show_level=False) == f"50.0 [50.0, 50.0] {LIMITED_MARK}"
    assert cell_text(dict(entry, verdict=VALID), "roc_auc", "b/v", "a/v", show_level=False) == "50.0 [50.0, 50.0]"
    rows = [TableRow("a", "Method A", "v", (TableCell(),)), TableRow("b", "Method B", "v", (TableCell(),))]
    valid = dict(entry, metrics={"roc_auc": [70.0, 60.0, 80.0]}, vs_best={}, verdict=VALID)
    table = {
        "protocol": {"model_limited": bounds()},
        "columns": {"d": {"best": {"response": {"roc_auc": "b/v"}}, "rows": {"a/v": entry, "b/v": valid}}},
    }
    note = model_limited_note(rows, ["d"], table)
    assert f"one score holds {FLAT_SHARE_BOUND:.0%} or more" in note and f"less than {ROLE_SUCCESS_BOUND:.0%}" in note
    assert "- d, Method A `v`: 1.0 on 20 of 20 responses" in note and "Method B" not in note
    best = best_table(rows, ["d"], table)
    assert "Best by ROC-AUC (among cells not model-limited)" in best
    assert "| d (response) | Method B `v`: 70.0 [60.0, 80.0] | – | 2 of 2 | 1 of 2 |" in best
    assert model_limited_note(rows, ["d"], {"columns": {}}) == ""


def test_the_column_verdicts_name_what_beats_length_and_what_ties_the_best_without_model_limited_cells() -> None:
    def entry(point: float, baseline: str | None, best: str | None, verdict: str = VALID) -> dict[str, object]:
        return {
            "level": "response",
            "metrics": {"roc_auc": [point, point - 5, point + 5]},
            "vs_baseline": {} if baseline is None else {"roc_auc": {"verdict": baseline}},
            "vs_best": {} if best is None else {"roc_auc": {"verdict": best}},
            "verdict": verdict,
        }

    rows = [TableRow(m, f"Method {m.upper()}", "v", (TableCell(),)) for m in ("a", "b", "c", "d", "len")]
    entries = {
        "a/v": entry(80.0, "better", None),
        "b/v": entry(75.0, "tied", "tied"),
        "c/v": entry(60.0, "worse", "worse"),
        "d/v": entry(79.0, "better", "tied", verdict=MODEL_LIMITED),
        "len/v": entry(74.0, None, "tied"),
    }
    table = {"columns": {"d": {"best": {"response": {"roc_auc": "a/v"}}, "rows": entries}}}
    assert verdict_lines(rows, ["d"], table) == [
        "- d (response): above the length baseline: Method A `v`; not told apart from the best (Method A `v`):"
        " Method B `v`, Method LEN `v`."
    ]
    alone = {"columns": {"d": {"best": {"response": {"roc_auc": "c/v"}}, "rows": {"c/v": entries["c/v"]}}}}
    assert verdict_lines(rows, ["d"], alone) == [
        "- d (response): above the length baseline: none; not told apart from the best (Method C `v`): none."
    ]
