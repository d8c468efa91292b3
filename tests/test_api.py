"""The scoring API and the ``hallulab`` command reproduce the DAG's unit scores, method by
method, from the same records, and fail the way the stages fail."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import huggingface_hub.constants
import pandas as pd
import pytest

from hallulab.api import Detector, override_strings, with_headline
from hallulab.cli import build_parser, command_parsers
from hallulab.core.call_cache import CallCache
from hallulab.core.config import ConfigError
from hallulab.core.errors import UserFacingError
from hallulab.pipeline import registry
from tests.conftest import ToyRun
from tests.workspace import HANG_GUARD_S, environment

REPO = Path(__file__).resolve().parents[1]
TOY_LINES = (REPO / "data/toy/passages.jsonl").read_text(encoding="utf-8").splitlines()

#: every method, scored in one process (each step loads what it needs, from the call cache)
SCRIPT = """
import sys
from pathlib import Path
from hallulab.api import Detector
out = Path(sys.argv[1])
for method in sys.argv[2:]:
    scores = Detector(method).score("data/toy/passages.jsonl", variants="all")
    scores.drop(columns=["method", "text", "headline"]).to_parquet(out / f"{method}.parquet", index=False)
"""


def readme_block(opening: str) -> tuple[str, str]:
    """The README's fenced Python block that begins with ``opening`` (what a user copies) and
    the ``text`` block right after it, when one follows (the output the README shows)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```(?:\n\n```text\n(.*?)```)?", text, flags=re.S)
    found = [(block, shown) for block, shown in blocks if block.startswith(opening)]
    assert len(found) == 1, f"the README has {len(found)} Python blocks opening with {opening!r}"
    return found[0]


#: the README's three plain-text records (no sentences given), scored from outside the checkout,
#: and the output the README shows for them
README_BLOCK, README_OUTPUT = readme_block("from hallulab.api import detect\n")
PLAIN_TEXT = README_BLOCK + 'print(scores.to_json(orient="records"))\n'


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


def test_the_api_scores_plain_text_records_from_any_folder(tmp_path: Path) -> None:
    """No ``sentences`` given: the configured spaCy model splits each response; the block prints
    what the README shows, the planted false sentence first; only the headline variants come
    back (n-gram's unigram average and maximum), each marked, with the columns the README
    names; run from a folder that is not the checkout."""
    done = subprocess.run(
        [sys.executable, "-c", PLAIN_TEXT], cwd=tmp_path, env=environment(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    *printed, as_json = done.stdout.strip("\n").splitlines()
    assert "\n".join(printed) + "\n" == README_OUTPUT
    assert printed[1].split() == ["everest", "Mount", "Everest", "is", "in", "Peru.", printed[1].split()[-1]]
    scores = pd.DataFrame(json.loads(as_json))
    sentences = scores[scores["level"] == "sentence"]
    assert set(sentences["record_id"]) == {"curie", "everest", "water"}
    curie = sentences[(sentences["record_id"] == "curie") & (sentences["variant"] == "ngram_n1_max")]
    assert list(curie["text"]) == ["Marie Curie was born in Warsaw.", "She won two Nobel Prizes."]
    assert set(scores["variant"]) == {"ngram_n1_avg", "ngram_n1_max"} and scores["headline"].all()
    readme = (REPO / "README.md").read_text(encoding="utf-8").split("Reading the output", 1)[1].split("More:")[0]
    assert set(scores.columns) <= set(re.findall(r"`(\w+)`", readme)), "the README names every column"
    responses = scores[scores["level"] == "response"]
    assert responses["text"].str.startswith(("Marie", "Mount", "Water")).all()


def test_settings_as_a_mapping_are_the_override_strings() -> None:
    assert override_strings({"ccp.aggregate.k": [5], "spacy.model": "en_core_web_sm", "x.y": "a b"}) == [
        "ccp.aggregate.k=[5]",
        "spacy.model=en_core_web_sm",
        'x.y="a b"',
    ]
    assert override_strings(["samples.used=5"]) == ["samples.used=5"]
    with pytest.raises(TypeError, match="not the string"):
        override_strings("samples.used=5")


def test_the_headline_is_the_default_and_every_variant_on_request() -> None:
    frame = pd.DataFrame({"variant": ["ccp_k10", "maxprob", "ccp_k10"], "score": [0.1, 0.2, 0.3]})
    only = with_headline(frame, ["ccp_k10"])
    assert list(only["variant"]) == ["ccp_k10", "ccp_k10"] and only["headline"].all()
    every = with_headline(frame, ["ccp_k10"], "all")
    assert list(every["headline"]) == [True, False, True]
    assert with_headline(frame, None)["headline"].all() and len(with_headline(frame, None)) == 3
    with pytest.raises(ConfigError, match="variants: 'some'"):
        Detector("selfcheck_ngram").score([], variants="some")


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
    first = json.loads((REPO / "data/toy/passages.jsonl").read_text().splitlines()[0])
    sentence = scores[(scores["record_id"] == first["id"]) & (scores["level"] == "sentence")].iloc[0]
    assert sentence["text"] == first["sentences"][0]  # the unit's text beside its score
    listed = _cli("methods")
    assert listed.returncode == 0 and all(name in listed.stdout for name in registry.methods())


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--method", "nope"], "unknown method 'nope'; registered:"),
        (["--method", "selfcheck_ngram", "-S", "samples.temprature=1"], "samples.temprature: no such setting"),
        (
            ["--method", "selfcheck_ngram", "-S", "+samples.temprature=1"],
            "no config under conf/ defines this setting",
        ),
        (["--method", "selfcheck_ngram", "-S", "samples.used=-1"], "samples.used: must be >= 1"),
    ],
)
def test_bad_input_through_the_command_is_the_stages_one_line_error(args: list[str], fragment: str) -> None:
    done = _cli("score", "data/toy/passages.jsonl", *args, "-o", "/dev/null")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("hallulab score: error:")]
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in done.stderr, done.stderr


def test_the_command_renders_the_report_page_of_a_users_scored_file(tmp_path: Path) -> None:
    """Records without sentences, scored by the command, then its page: the page's records
    carry the sentences the scoring split, and its scores are the file's."""
    records = tmp_path / "mine.jsonl"
    raws = [{k: v for k, v in json.loads(line).items() if k != "sentences" and k != "labels"} for line in TOY_LINES[:3]]
    records.write_text("".join(json.dumps(r) + "\n" for r in raws))
    scored = tmp_path / "scores.jsonl"
    assert _cli("score", str(records), "--method", "selfcheck_ngram", "-o", str(scored)).returncode == 0
    page = tmp_path / "page" / "report.html"
    done = _cli("report", str(scored), "--records", str(records), "-o", str(page), cwd=tmp_path)
    assert done.returncode == 0 and "Report:" in done.stdout, done.stderr
    html = page.read_text(encoding="utf-8")
    opening = html.index(">", html.index('id="report-data"')) + 1
    payload = json.loads(html[opening : html.index("</script>", opening)].replace("<\\/", "</"))
    assert [r["id"] for r in payload["records"]] == [r["id"] for r in raws]
    frame = pd.read_json(scored, lines=True)
    first = frame[(frame["record_id"] == raws[0]["id"]) & (frame["level"] == "sentence")]
    split = list(dict.fromkeys(first.sort_values("sentence_index")["text"]))
    assert [s["text"] for s in payload["records"][0]["sentences"]] == split
    assert set(payload["scores"]) == {"selfcheck_ngram"}


def test_the_report_refuses_a_file_that_is_not_a_scored_file(tmp_path: Path) -> None:
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    done = _cli("report", str(other), "--records", "data/toy/passages.jsonl", "-o", str(tmp_path / "r.html"))
    assert done.returncode == 2 and "not a scored file" in done.stderr, done.stderr


def test_a_bad_record_in_the_reports_records_names_the_file_and_line(tmp_path: Path) -> None:
    records = tmp_path / "mine.jsonl"
    raws = [{k: v for k, v in json.loads(line).items() if k != "labels"} for line in TOY_LINES[:2]]
    records.write_text("".join(json.dumps(r) + "\n" for r in raws))
    scored = tmp_path / "scores.jsonl"
    assert _cli("score", str(records), "--method", "selfcheck_ngram", "-o", str(scored)).returncode == 0
    records.write_text(json.dumps(raws[0]) + "\n" + json.dumps({**raws[1], "samples": "one string"}) + "\n")
    done = _cli("report", str(scored), "--records", str(records), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 2, done.stderr
    line = next(line for line in done.stderr.splitlines() if "error:" in line)
    assert f"record {raws[1]['id']!r}, field 'samples'" in line and f"{records}:2" in line, done.stderr


def test_the_command_refuses_an_output_it_would_not_write_before_scoring(tmp_path: Path) -> None:
    done = _cli("score", "data/toy/passages.jsonl", "--method", "selfcheck_ngram", "-o", str(tmp_path / "s.xlsx"))
    assert done.returncode == 2 and "unknown suffix '.xlsx'" in done.stderr, done.stderr
    assert not (tmp_path / "s.xlsx").exists()


def test_the_command_has_a_version_and_documents_every_option_with_its_default() -> None:
    version = _cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("hallulab ")
    helped = " ".join(_cli("score", "--help").stdout.split())
    for option, default in (("--set", "none"), ("--output", "scores.parquet"), ("--variants", "headline")):
        assert option in helped and f"default: {default}" in helped, option


def test_the_command_parsers_are_every_subcommand_under_its_words() -> None:
    """What the documentation's CLI reference renders: no subcommand left out, each under the
    words that run it."""
    parsers = command_parsers()
    assert list(parsers) == [
        (),
        ("methods",),
        ("score",),
        ("report",),
        ("data",),
        ("data", "list"),
        ("data", "fetch"),
        ("data", "add"),
        ("plan",),
        ("nli",),
        ("nli", "train"),
        ("calibrate",),
        ("benchmark",),
        ("calibrations",),
    ]
    for words, parser in parsers.items():
        assert parser.prog == " ".join(("hallulab", *words))
        listed = re.search(r"\{([\w,]+)\}\s+\.\.\.", parser.format_usage())  # argparse's "{a,b} ..."
        assert [child[-1] for child in parsers if child and child[:-1] == words] == (
            listed.group(1).split(",") if listed else []
        ), words
    assert build_parser().format_help() == parsers[()].format_help()


def test_every_output_option_is_dash_o_output_and_the_old_out_still_works() -> None:
    """score, report, calibrate, plan, nli train and benchmark write where -o/--output says; --out, the
    spelling plan and nli train once took, is still accepted (published commands keep working)
    but the help shows one spelling."""
    writers = []
    for words, parser in command_parsers().items():
        shown = [a for a in parser._actions if a.help != argparse.SUPPRESS]
        outputs = [a for a in shown if a.dest == "output"]
        assert not [a for a in shown if "--out" in a.option_strings], words
        if not outputs:
            continue
        writers.append(words)
        assert [a.option_strings for a in outputs] == [["-o", "--output"]], words
        assert "--out " not in parser.format_help() and "--out]" not in parser.format_usage(), words
    assert writers == [("score",), ("report",), ("plan",), ("nli", "train"), ("calibrate",), ("benchmark",)]
    parser = build_parser()
    for words in (["plan", "--dataset", "toy"], ["nli", "train"]):
        for flag in ("-o", "--output", "--out"):
            assert parser.parse_args([*words, flag, "here"]).output == "here", (words, flag)
    assert parser.parse_args(["nli", "train"]).output is None
    assert parser.parse_args(["score", "r.jsonl", "--method", "m"]).output == "scores.parquet"


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

    checked = with_hallucination_scores(RunnableLambda(answer), "selfcheck_ngram", samples_to_draw=3)
    result = checked.invoke("Who was Marie Curie?")
    assert result["output"] and len(result["samples"]) == 3
    scores = result["scores"]
    assert set(scores["level"]) == {"sentence", "response"} and set(scores["record_id"]) == {"chain"}
    assert len(scores[(scores["level"] == "sentence") & (scores["variant"] == "ngram_n1_max")]) >= 1


@pytest.mark.parametrize("method", ["semantic_entropy", "selfcheck_nli", "ensemble"])
def test_a_missing_nli_model_stops_the_method_before_any_model_call(
    method: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local folder found nowhere, or a hub model neither the hub (offline here) nor its cache
    gives: one line naming what to run, raised before any step (the call cache saw no request);
    the ensemble checks its members' models (its default members include NLI-reading ones)."""
    # offline as a machine without network is, without waiting for the hub's connection timeout:
    # huggingface_hub reads HF_HUB_OFFLINE once, into this constant, when it is first imported
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    records = [{"id": "a", "response": "Paris is in France.", "samples": ["Paris is in France.", "Paris is in Spain."]}]
    for model, said in (("models/nowhere", "`hallulab nli train -o "), ("no-such-org/no-such-nli", "minilm_offline")):
        with CallCache(tmp_path / "calls.sqlite") as cache:
            with pytest.raises(UserFacingError) as caught:
                Detector(method, [f"nli.model={model}"]).score(records, cache)
            assert cache.stats.hits + cache.stats.misses == 0
        assert "\n" not in str(caught.value) and model in str(caught.value) and said in str(caught.value)
