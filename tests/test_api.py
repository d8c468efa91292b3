"""The scoring API and the ``hallulab`` command reproduce the DAG's unit scores, method by
method, from the same records, and fail the way the stages fail."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from hallulab.pipeline import registry
from tests.conftest import ToyRun
from tests.workspace import HANG_GUARD_S, environment

REPO = Path(__file__).resolve().parents[1]

#: every method, scored in one process (each step loads what it needs, from the call cache)
SCRIPT = """
import sys
from pathlib import Path
from hallulab.api import Detector
out = Path(sys.argv[1])
for method in sys.argv[2:]:
    Detector(method).score("data/toy/passages.jsonl").to_parquet(out / f"{method}.parquet", index=False)
"""


@pytest.mark.slow
def test_the_api_reproduces_every_methods_dag_scores_on_the_toy_set(toy_run: ToyRun, tmp_path: Path) -> None:
    methods = list(registry.methods())
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), *methods],
        cwd=toy_run.root,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    for method in methods:
        ours = pd.read_parquet(tmp_path / f"{method}.parquet")
        dag = pd.read_parquet(toy_run.root / "data" / "aggregated" / "toy" / f"{method}.parquet")
        pd.testing.assert_frame_equal(ours, dag, check_exact=True, obj=method)


def _cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hallulab.cli", *args], cwd=cwd, env=environment(), capture_output=True, text=True
    )


def test_the_command_scores_a_file_and_lists_methods(tmp_path: Path) -> None:
    out = tmp_path / "scores.csv"
    done = _cli(
        "score", "data/toy/passages.jsonl", "--method", "selfcheck_ngram", "-S", "selfcheck_ngram.n=2", "-o", str(out)
    )
    assert done.returncode == 0, done.stderr
    scores = pd.read_csv(out)
    assert set(scores["variant"]) == {"ngram_n2_avg", "ngram_n2_max"} and set(scores["level"]) == {
        "sentence",
        "response",
    }
    listed = _cli("methods")
    assert listed.returncode == 0 and all(name in listed.stdout for name in registry.methods())


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--method", "nope"], "unknown method 'nope'; registered:"),
        (["--method", "selfcheck_ngram", "-S", "selfcheck.temprature=1"], "selfcheck.temprature: no such setting"),
        (
            ["--method", "selfcheck_ngram", "-S", "+selfcheck.temprature=1"],
            "no config under conf/ defines this setting",
        ),
        (["--method", "selfcheck_ngram", "-S", "selfcheck.num_samples=-1"], "selfcheck.num_samples: must be >= 1"),
    ],
)
def test_bad_input_through_the_command_is_the_stages_one_line_error(args: list[str], fragment: str) -> None:
    done = _cli("score", "data/toy/passages.jsonl", *args, "-o", "/dev/null")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("hallulab score: error:")]
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in done.stderr, done.stderr


def test_a_bad_record_through_the_command_names_the_record_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    good = json.loads((REPO / "data/toy/passages.jsonl").read_text().splitlines()[0])
    bad.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "p2", "labels": ["wrong"]}) + "\n")
    done = _cli("score", str(bad), "--method", "selfcheck_ngram", "-o", str(tmp_path / "x.parquet"))
    assert done.returncode == 2 and "record 'p2', field 'labels" in done.stderr, done.stderr


@pytest.mark.model
def test_a_langchain_chain_returns_its_output_with_the_scores_of_it() -> None:
    """A real chain: the packaged SmolLM2 behind a LangChain runnable, sampled at temperature 1."""
    from langchain_core.runnables import RunnableLambda

    from hallulab.api import with_hallucination_scores
    from hallulab.core.config import compose
    from hallulab.llm import build_llm
    from hallulab.llm.base import DecodingParams

    llm = build_llm({**compose()["llm_catalogue"]["smollm2"], "num_threads": 1})
    params = DecodingParams(max_new_tokens=24, temperature=1.0)

    def answer(question: str) -> str:
        return llm.generate([[{"role": "user", "content": question}]], params, [None])[0].text

    checked = with_hallucination_scores(RunnableLambda(answer), "selfcheck_ngram", num_samples=3)
    result = checked.invoke("Who was Marie Curie?")
    assert result["output"] and len(result["samples"]) == 3
    scores = result["scores"]
    assert set(scores["level"]) == {"sentence", "response"} and set(scores["record_id"]) == {"chain"}
    assert len(scores[(scores["level"] == "sentence") & (scores["variant"] == "ngram_n1_max")]) >= 1
