"""Malformed input through the real loaders and stages: every case gives one clear line naming
the record, the field or the setting (exit status 2 from a stage), or is handled the way the
method says and counted. The stages run as the DAG runs them: `python stages/<stage>.py`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hallulab.artifacts.concepts.processing import WordRanks, is_common
from hallulab.core.config import ConfigError, compose, write_params
from hallulab.core.errors import RecordError, UserFacingError
from hallulab.core.io import InputFileError
from hallulab.data.loaders import DatasetConfigError, load_dataset, load_jsonl_records
from hallulab.methods.ccp.formula import claim_ccp
from hallulab.methods.sample_selection import SampleKnobs
from hallulab.methods.self_familiarity.masking import mask_concept
from hallulab.methods.selfcheck_ngram.corpus import NgramCorpus
from hallulab.methods.selfcheck_ngram.ngram import score_corpora
from hallulab.pipeline import registry
from tests.conftest import REPO, TOY
from tests.workspace import environment

GOOD = {"id": "p1", "response": "A cat sat. It slept.", "sentences": ["A cat sat.", "It slept."], "samples": ["A cat."]}


def _jsonl(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _stage(
    root: Path, script: str, *args: str, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**environment(), **(extra_env or {})}
    return subprocess.run(
        [sys.executable, str(REPO / "stages" / script), *args], cwd=root, env=env, capture_output=True, text=True
    )


def _one_line_error(done: subprocess.CompletedProcess[str], *fragments: str) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("hallulab ")]
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr == lines[0] + "\n", done.stderr  # the whole of stderr: no line before or after it
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "conf").symlink_to(REPO / "conf")
    return tmp_path


def _params(root: Path, *overrides: str) -> None:
    write_params(root / "params.yaml", list(overrides), REPO / "conf")


# ---------------------------------------------------------------- the loaders


def test_an_empty_data_file_is_an_error_naming_the_source(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n")
    with pytest.raises(DatasetConfigError, match="holds no records"):
        load_dataset({"name": "x", "loader": "jsonl", "path": str(path)})


def test_non_utf8_bytes_name_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(
        json.dumps(GOOD).encode() + b"\n" + '{"id": "p2", "response": "caf\xe9"}'.encode("latin-1") + b"\n"
    )
    with pytest.raises(InputFileError, match=rf"{path}:2: not UTF-8 \(byte 0xe9 at column 30\)"):
        load_jsonl_records(path)


def test_truncated_json_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + '{"id": "p2", "resp\n')
    with pytest.raises(InputFileError, match=rf"{path}:2: not valid JSON"):
        load_jsonl_records(path)


def test_the_library_loader_rejects_duplicate_ids_like_the_stage(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "dup.jsonl", GOOD, {**GOOD, "response": "A dog.", "sentences": ["A dog."]})
    with pytest.raises(RecordError, match=r"'p1', field 'id': duplicated .*dup.jsonl:1 and line 2"):
        load_jsonl_records(path)


@pytest.mark.parametrize("limit", [0, -3, "ten", True])
def test_a_bad_limit_is_named(tmp_path: Path, limit: object) -> None:
    path = _jsonl(tmp_path / "ok.jsonl", GOOD)
    with pytest.raises(DatasetConfigError, match=r"dataset\.limit"):
        load_dataset({"name": "x", "loader": "jsonl", "path": str(path), "limit": limit})


# ---------------------------------------------------------------- the stages


def test_a_stage_on_bad_input_prints_one_line_and_exits_2(workspace: Path) -> None:
    data = _jsonl(workspace / "bad.jsonl", GOOD, {**GOOD, "id": "p2", "labels": ["accurate", "wrong"]})
    _params(workspace, "dataset=jsonl", "dataset.name=bad", f"dataset.path={data}")
    done = _stage(workspace, "prepare.py", "--dataset", "bad")
    _one_line_error(done, "prepare", "record 'p2', field 'labels[1]'", "unknown label 'wrong'", "bad.jsonl:2")
    debug = _stage(workspace, "prepare.py", "--dataset", "bad", extra_env={"HALLULAB_DEBUG": "1"})
    assert debug.returncode != 0 and "Traceback" in debug.stderr


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("samples.used=-1", "samples.used: must be >= 1, got -1"),
        ("selfcheck_ngram.n=2.7", "selfcheck_ngram.n[0]: expected an integer, got 2.7"),
        ("selfcheck_ngram.smoothing_k=-1", "selfcheck_ngram.smoothing_k: must be >= 0.0, got -1"),
        # a key no file under conf/ defines: Hydra's `+` adds it, nothing would read it
        ("+samples.temperature=0.5", "samples.temperature: no config under conf/ defines this setting"),
        ("+selfcheck_ngram.orders=[1]", "selfcheck_ngram.orders: no config under conf/ defines this setting"),
    ],
)
def test_a_bad_sweep_knob_stops_the_aggregate_stage_naming_the_setting(
    workspace: Path, override: str, fragment: str
) -> None:
    raw = workspace / "data/scores/toy/selfcheck_ngram.json"
    raw.parent.mkdir(parents=True)
    raw.write_text(json.dumps({"spacy": {}, "response_split": "given", "skipped_records": 0, "corpora": {}}))
    generated = workspace / "data/generated/toy/passages.jsonl"
    generated.parent.mkdir(parents=True)
    generated.write_text(TOY.read_text())
    _params(workspace, override)
    done = _stage(workspace, "aggregate.py", "--method", "selfcheck_ngram", "--dataset", "toy")
    _one_line_error(done, fragment)


def test_a_key_in_no_section_a_stage_reads_is_refused_before_any_stage_runs(workspace: Path) -> None:
    """A key outside every knob section (``+temperature``) is no stage's to check: the always-run
    ``code_files`` stage checks the whole of ``params.yaml`` first, in one line and exit 2."""
    _params(workspace, "+temperature=0.5")
    done = subprocess.run(
        [sys.executable, "-m", "hallulab.pipeline.settings_schema", "params.yaml"],
        cwd=workspace,
        env=environment(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("params.yaml: temperature: no config under conf/ defines this setting"), done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr


def test_a_value_its_knob_class_cannot_hold_is_refused_when_the_settings_are_composed() -> None:
    """The knob classes' schemas come first in every composition, so Hydra's merge refuses a
    value of the wrong type before any stage runs, in one line naming the setting."""
    with pytest.raises(
        ConfigError, match=r"^samples\.used: Value 'abc' of type 'str' could not be converted to Integer$"
    ):
        compose(["samples.used=abc"])
    with pytest.raises(ConfigError, match=r"^ccp\.aggregate\.word_merge: Value 'maybe' is not a valid bool"):
        compose(["ccp.aggregate.word_merge=maybe"])


def test_stored_scores_of_another_shape_are_a_one_line_error_naming_the_file(workspace: Path) -> None:
    raw = workspace / "data/scores/toy/selfcheck_ngram.json"
    raw.parent.mkdir(parents=True)
    raw.write_text(json.dumps({"corpora": {}, "skipped_records": 0, "ngram_orders": [1]}))
    generated = workspace / "data/generated/toy/passages.jsonl"
    generated.parent.mkdir(parents=True)
    generated.write_text(TOY.read_text())
    _params(workspace, "selfcheck_ngram.smoothing_k=0")
    done = _stage(workspace, "aggregate.py", "--method", "selfcheck_ngram", "--dataset", "toy")
    _one_line_error(
        done,
        "data/scores/toy/selfcheck_ngram.json: not the stored scores of NgramScores",
        "missing ['spacy', 'response_split'], unknown ['ngram_orders']",
        "re-run its score stage",
    )


# ---------------------------------------------------------------- settings a user can fix


def _corpus(samples: int) -> NgramCorpus:
    return NgramCorpus(sentences=[["A", "cat"]], response=[["A", "cat"]], samples=[[["A", "cat"]]] * samples)


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: registry.method("nope"), "unknown method 'nope'; registered:"),
        (lambda: registry.artifact("nope"), "unknown artifact 'nope'; registered:"),
        (
            lambda: score_corpora({"p1": _corpus(5)}, [1], ["max"], selection=SampleKnobs(used=50)),
            "samples.used: N=50 asked for, record 'p1' stores 5 samples",
        ),
        (lambda: score_corpora({"p1": _corpus(2)}, [0], ["max"]), "selfcheck_ngram.n: n-gram orders must be >= 1"),
        (lambda: score_corpora({"p1": _corpus(2)}, [1], ["median"]), "selfcheck_ngram.aggregations: unknown"),
        (lambda: claim_ccp([0.0], "median"), "ccp.claim_aggregation: 'median' is not one of"),
        (lambda: mask_concept("x", "y", masking="fuzzy"), "self_familiarity.score.masking: 'fuzzy'"),
        (lambda: is_common(("x",), WordRanks.from_words(["x"]), 1, "some"), "concepts.common_filter: 'some'"),
    ],
)
def test_a_setting_a_user_can_fix_is_a_one_line_error_naming_it(call: Any, fragment: str) -> None:
    """Family: plain ValueError / KeyError for user-fixable settings came out as tracebacks.
    Each such site raises a user-facing error (one line from a stage, exit 2) that names the
    setting, what was asked and what is available."""
    with pytest.raises(UserFacingError) as caught:
        call()
    assert fragment in str(caught.value)


@pytest.mark.parametrize(("flag", "name"), [("--method", "nope"), ("--artifact", "nope")])
def test_an_unknown_method_or_artifact_stops_the_stage_in_one_line(workspace: Path, flag: str, name: str) -> None:
    _params(workspace)
    script = "score.py" if flag == "--method" else "extract.py"
    done = _stage(workspace, script, flag, name, "--dataset", "toy")
    _one_line_error(done, f"unknown {flag[2:]} 'nope'; registered:")


@pytest.mark.parametrize("script", ["score.py", "aggregate.py", "curve.py", ("knob_curve.py", "--knob", "k_max")])
def test_every_method_stage_names_a_typo_before_a_missing_file(workspace: Path, script: str | tuple[str, ...]) -> None:
    """No params.yaml and no inputs in the folder: the method's name is checked first."""
    name, *extra = (script,) if isinstance(script, str) else script
    done = _stage(workspace, name, "--method", "nope", "--dataset", "toy", *extra)
    _one_line_error(done, "unknown method 'nope'; registered:")


def test_a_stage_step_the_method_lacks_is_a_one_line_error(workspace: Path) -> None:
    _params(workspace)
    done = _stage(workspace, "score.py", "--method", "greybox", "--dataset", "toy")
    line = _one_line_error(done, "hallulab score: error: method 'greybox' has no score step")
    assert "aggregate_greybox" in line


def test_the_correction_stage_names_an_unknown_method_setting(workspace: Path) -> None:
    _params(workspace, "correction.fact_method=nope")
    done = _stage(workspace, "correct.py", "--dataset", "toy")
    _one_line_error(done, "correction.fact_method: unknown method 'nope'; registered:")


def test_an_llm_role_naming_no_catalogue_entry_is_named(workspace: Path) -> None:
    generated = workspace / "data/generated/toy/passages.jsonl"
    generated.parent.mkdir(parents=True)
    generated.write_text(TOY.read_text())
    _params(workspace, "llms.evaluator=no_such_llm")
    done = _stage(workspace, "score.py", "--method", "selfcheck_prompt", "--dataset", "toy")
    _one_line_error(done, "llms.evaluator: 'no_such_llm' is not in llm_catalogue")


def test_a_response_over_spacys_limit_is_named_by_record(workspace: Path) -> None:
    long_text = "Word " * 210_000
    generated = _jsonl(
        workspace / "long.jsonl", GOOD, {"id": "huge", "response": long_text, "sentences": ["Word"], "samples": ["x"]}
    )
    target = workspace / "data/generated/long/passages.jsonl"
    target.parent.mkdir(parents=True)
    target.write_text(generated.read_text())
    _params(workspace)
    done = _stage(workspace, "score.py", "--method", "selfcheck_ngram", "--dataset", "long")
    _one_line_error(done, "record 'huge', field 'response'", "over spaCy's limit")


def test_a_corrupt_call_cache_stops_a_stage_with_its_path(
    workspace: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    cache_dir = tmp_path_factory.mktemp("corrupt-cache")
    (cache_dir / "calls.sqlite").write_bytes(b"not a database" * 500)
    generated = workspace / "data/generated/toy/passages.jsonl"
    generated.parent.mkdir(parents=True)
    generated.write_text(TOY.read_text())
    _params(workspace)
    done = _stage(
        workspace,
        "score.py",
        "--method",
        "selfcheck_ngram",
        "--dataset",
        "toy",
        extra_env={"HALLULAB_CACHE_DIR": str(cache_dir)},
    )
    _one_line_error(done, str(cache_dir / "calls.sqlite"), "delete it")


def test_a_blank_sample_is_kept_counted_and_its_record_named(workspace: Path) -> None:
    data = _jsonl(workspace / "blank.jsonl", GOOD, {**GOOD, "id": "p2", "samples": ["A cat.", "  "]})
    _params(workspace, "dataset=jsonl", "dataset.name=blank", f"dataset.path={data}")
    done = _stage(workspace, "prepare.py", "--dataset", "blank")
    assert done.returncode == 0, done.stderr
    assert "1 blank sample(s) in 1 record(s), kept as samples that support nothing: 'p2'" in done.stderr
    provenance = json.loads((workspace / "data/prepared/blank/provenance.json").read_text())
    assert provenance["blank_samples"] == 1 and provenance["samples_per_passage"] == [1, 2]


def test_a_record_that_is_not_english_is_warned_about_by_id(workspace: Path) -> None:
    french = (
        "Marie Curie était une physicienne et chimiste polonaise naturalisée française. Elle a découvert "
        "le polonium et le radium avec son mari Pierre Curie, et reçu deux prix Nobel."
    )
    english = {**GOOD, "id": "en", "samples": ["James Brown wrote Papa's Got a Brand New Bag."] * 4}
    data = _jsonl(workspace / "fr.jsonl", english, {**GOOD, "id": "fr", "response": french, "sentences": [french]})
    _params(workspace, "dataset=jsonl", "dataset.name=fr", f"dataset.path={data}")
    done = _stage(workspace, "prepare.py", "--dataset", "fr")
    assert done.returncode == 0, done.stderr
    assert "1 record(s) look not English" in done.stderr and ": 'fr'" in done.stderr
    assert json.loads((workspace / "data/prepared/fr/provenance.json").read_text())["probably_not_english"] == 1


def test_auto_generation_says_what_it_did(workspace: Path) -> None:
    records = [GOOD, {**GOOD, "id": "p2"}]
    prepared = _jsonl(workspace / "p.jsonl", *records)
    target = workspace / "data/prepared/mixed/passages.jsonl"
    target.parent.mkdir(parents=True)
    target.write_text(prepared.read_text())
    _params(workspace, "generate.samples_to_draw=2")
    done = _stage(workspace, "generate.py", "--dataset", "mixed")
    assert done.returncode == 0, done.stderr
    assert "0 record(s) got N_max=2 new samples, 2 kept their own" in done.stderr
    report = json.loads((workspace / "data/generated/mixed/report.json").read_text())
    assert report["sample_counts"] == {"1": 2}


def test_stage_outputs_hold_no_run_statistics(workspace: Path) -> None:
    """Same inputs and seed, byte-identical outputs: timings and cache hits go to logs/ only."""
    generated = workspace / "data/generated/toy/passages.jsonl"
    generated.parent.mkdir(parents=True)
    generated.write_text(TOY.read_text())
    _params(workspace)
    outputs = []
    for _ in range(2):
        assert _stage(workspace, "score.py", "--method", "selfcheck_ngram", "--dataset", "toy").returncode == 0
        assert _stage(workspace, "aggregate.py", "--method", "selfcheck_ngram", "--dataset", "toy").returncode == 0
        outputs.append(
            [
                (workspace / p).read_bytes()
                for p in (
                    "data/scores/toy/selfcheck_ngram.json",
                    "data/aggregated/toy/selfcheck_ngram.parquet",
                    "data/aggregated/toy/selfcheck_ngram.diagnostics.json",
                )
            ]
        )
    assert outputs[0] == outputs[1]
    log = json.loads((workspace / "logs/toy/score_selfcheck_ngram.json").read_text())
    assert "seconds" in log and "cache" in log


@pytest.mark.slow
def test_unlabelled_and_partly_labelled_data_run_through_the_dag(tmp_path: Path) -> None:
    """`dvc repro` of the stages this is about (prepare -> sentences -> n-gram -> evaluate)
    finishes; evaluation covers the labelled part and says how much that was; a data set
    without labels evaluates to empty metrics and the summary says why. (The whole DAG on the
    toy set runs once per test session, in the ``toy_run`` fixture.)"""
    from tests.workspace import copy_workspace, dvc

    target = "aggregate_selfcheck_ngram"

    records = [
        {**GOOD, "labels": ["accurate", "major_inaccurate"], "samples": ["A cat sat.", "A dog barked."]},
        {**GOOD, "id": "p2", "labels": ["accurate", "accurate"], "samples": ["A cat sat. It slept.", "It slept."]},
        {**GOOD, "id": "p3", "samples": ["A cat.", "It woke."]},  # no labels
    ]
    data = _jsonl(tmp_path / "partial.jsonl", *records)
    root = copy_workspace(
        tmp_path / "ws",
        ("dataset=jsonl", "dataset.name=partial", f"dataset.path={data}", "profile=quick"),
        keep_lock=False,
    )
    dvc(root, "repro", target)
    info = json.loads((root / "metrics/partial/selfcheck_ngram.info.json").read_text())
    assert info["levels"]["sentence"]["labelled_passages"] == 2
    assert info["levels"]["sentence"]["unlabelled_passages"] == 1
    unlabelled = _jsonl(tmp_path / "partial.jsonl", *[{k: v for k, v in r.items() if k != "labels"} for r in records])
    assert unlabelled.is_file()
    log = dvc(root, "repro", target)  # the source stage sees the edited file: prepare re-runs
    assert "Running stage 'prepare'" in log
    assert json.loads((root / "metrics/partial/selfcheck_ngram.json").read_text()) == {}
    summary = subprocess.run(
        [sys.executable, "-m", "hallulab.evaluation.summary", "--dataset", "partial"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "labels none of the units" in summary
    assert os.path.getsize(root / "metrics/partial/pr/selfcheck_ngram.csv") > 0


def test_a_k_max_beyond_what_the_generator_stored_names_both_knobs(tmp_path: Path) -> None:
    from hallulab.artifacts.response_tokens import SPEC
    from hallulab.artifacts.response_tokens.build import build
    from hallulab.core.call_cache import CallCache
    from hallulab.core.config import ConfigError, compose
    from hallulab.data.schema import Record
    from hallulab.pipeline.context import BuildContext
    from hallulab.pipeline.params import ParamsView
    from hallulab.pipeline.resources import Resources

    record = Record(id="p", response="A cat.", sentences=["A cat."], samples=[])
    generated = [{"id": "p", "text": "A cat.", "tokens": [{"token": "A", "logprob": -1.0, "top": [["A", -1.0]] * 3}]}]
    view = ParamsView(compose(["response_tokens.top_k=5"]), SPEC.inputs.param_keys(), "response_tokens")
    with CallCache(tmp_path / "c.sqlite") as cache, pytest.raises(ConfigError, match=r"K_max=5 asked for.*stored 3"):
        build(BuildContext("t", [record], {"main_tokens": generated}, view, Resources(view, cache)))


# ---------------------------------------------------------------- the command: one line, exit 2


def _cli_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """``hallulab <args>`` in-process: exit status 2 and exactly one ``hallulab <command>: error:`` line."""
    from hallulab.cli import main

    capsys.readouterr()
    assert main(list(args)) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("hallulab ")]
    assert len(lines) == 1 and ": error: " in lines[0], err
    assert err == lines[0] + "\n", err  # the whole of stderr: no line before or after it
    return lines[0]


@pytest.fixture
def no_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HALLULAB_DEBUG", raising=False)


FLEET = "llm_catalogue.vllm_server"


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ([f"{FLEET}.endpoints=[http://10.0.0.1:8000/v1]"], f"set {FLEET}.base_url=null beside the endpoints"),
        (
            [f"{FLEET}.base_url=null", f"{FLEET}.endpoints=[http://10.0.0.1:8000/v1,http://10.0.0.1:8000/v1]"],
            f"{FLEET}.endpoints: lists 'http://10.0.0.1:8000/v1' twice",
        ),
    ],
)
@pytest.mark.usefixtures("no_debug")
def test_a_fleet_beside_a_base_url_or_a_url_twice_names_the_catalogue_entry_before_any_record(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, overrides: list[str], fragment: str
) -> None:
    """The entry's default base_url stays unless set to null: a fleet beside it is refused
    naming the entry's keys, before the records are read (the records file does not exist)."""
    settings = [arg for override in ["llms.generator=vllm_server", *overrides] for arg in ("-S", override)]
    absent = str(tmp_path / "absent.jsonl")
    assert fragment in _cli_error(capsys, "score", absent, "--method", "selfcheck_ngram", *settings)


@pytest.mark.usefixtures("no_debug")
def test_an_error_is_one_line_from_the_command_and_from_a_stage(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The whole of stderr is the error line, from ``hallulab`` and from a stage's runner: no
    second line (``HALLULAB_DEBUG`` is documented once, in the help and the docs)."""
    from hallulab.cli import main
    from hallulab.core.errors import RecordError
    from hallulab.pipeline.runner import run_stage

    afile = tmp_path / "root.txt"
    afile.write_text("not a folder")
    capsys.readouterr()
    assert main(["data", "list", "--root", str(afile)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("hallulab data: error: --root "), err

    def fails() -> None:
        raise RecordError("p1", "labels", "unknown label")

    with pytest.raises(SystemExit) as stopped:
        run_stage("prepare", fails)
    err = capsys.readouterr().err
    assert stopped.value.code == 2
    assert err == "hallulab prepare: error: record 'p1', field 'labels': unknown label\n", err


@pytest.mark.usefixtures("no_debug")
def test_a_data_root_that_is_a_file_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from hallulab.data import fetch as fetching

    afile = tmp_path / "root.txt"
    afile.write_text("not a folder")
    line = _cli_error(capsys, "data", "fetch", "sac3_qa_halu", "--root", str(afile))
    assert f"--root {afile}: {afile} is a file, not a folder" in line
    assert f"{afile} is a file" in _cli_error(capsys, "data", "list", "--root", str(afile / "below"))
    with pytest.raises(fetching.FetchError, match="is a file, not a folder"):
        fetching.fetch("sac3_qa_halu", afile / "below")


@pytest.mark.usefixtures("no_debug")
def test_a_response_over_spacys_limit_is_named_before_spacy_loads(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A 1 MB response without sentences: the record's line errors.md promises, before the
    splitter runs (the spaCy pipeline named does not even exist)."""
    records = _jsonl(tmp_path / "huge.jsonl", GOOD, {"id": "huge", "response": "Word " * 210_000, "samples": ["x"]})
    settings = ("--method", "selfcheck_ngram", "-S", "spacy.model=no_such_pipeline", "-o", str(tmp_path / "s.csv"))
    line = _cli_error(capsys, "score", str(records), *settings)
    assert "record 'huge', field 'response': is 1,050,000 characters, over spaCy's limit of 1,000,000" in line
    assert f"({records}:2)" in line


@pytest.mark.usefixtures("no_debug")
def test_an_output_under_a_file_is_refused_before_scoring(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """-o's folder is checked first: the records file does not even exist."""
    afile = tmp_path / "plain"
    afile.write_text("x")
    absent = str(tmp_path / "absent.jsonl")
    line = _cli_error(capsys, "score", absent, "--method", "selfcheck_ngram", "-o", str(afile / "s.csv"))
    assert f"-o {afile / 's.csv'}: {afile} is a file, not a folder" in line
    line = _cli_error(capsys, "report", absent, "--records", absent, "-o", str(afile / "r.html"))
    assert f"{afile} is a file, not a folder" in line


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
@pytest.mark.usefixtures("no_debug")
def test_scoring_an_empty_file_says_it_holds_no_records(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str
) -> None:
    records = tmp_path / "empty.jsonl"
    records.write_text(content)
    out = tmp_path / "s.csv"
    line = _cli_error(capsys, "score", str(records), "--method", "selfcheck_ngram", "-o", str(out))
    assert f"{records}: no records" in line
    assert not out.exists()


def test_detect_on_no_records_is_an_error() -> None:
    from hallulab.api import detect

    with pytest.raises(UserFacingError, match="no records"):
        detect([], "selfcheck_ngram")


def _scored_csv(path: Path, record_id: str = "p1") -> Path:
    from hallulab.core.units import COLUMNS

    row = dict.fromkeys(COLUMNS, None) | {
        "variant": "v",
        "level": "sentence",
        "record_id": record_id,
        "unit_id": f"{record_id}#sentence0",
        "unit_index": 0,
        "sentence_index": 0,
        "score": 0.5,
    }
    import pandas as pd

    pd.DataFrame([{"method": "selfcheck_ngram", **row, "text": "A cat sat."}]).to_csv(path, index=False)
    return path


@pytest.mark.usefixtures("no_debug")
def test_report_on_an_empty_or_unknown_scores_file_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    records = _jsonl(tmp_path / "r.jsonl", GOOD)
    empty = tmp_path / "scores.csv"
    empty.write_text("")
    line = _cli_error(capsys, "report", str(empty), "--records", str(records), "-o", str(tmp_path / "r.html"))
    assert f"{empty}: empty" in line
    other = _scored_csv(tmp_path / "scores.tsv")
    line = _cli_error(capsys, "report", str(other), "--records", str(records), "-o", str(tmp_path / "r.html"))
    assert f"{other}: unknown suffix '.tsv'" in line
    garbage = tmp_path / "scores.parquet"
    garbage.write_text("method,variant\n")
    line = _cli_error(capsys, "report", str(garbage), "--records", str(records), "-o", str(tmp_path / "r.html"))
    assert f"{garbage}: not a readable .parquet file" in line


@pytest.mark.usefixtures("no_debug")
def test_report_on_records_that_are_not_the_scored_ones_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scores = _scored_csv(tmp_path / "scores.csv")
    other = _jsonl(tmp_path / "other.jsonl", {"id": "zz", "response": "A dog.", "samples": ["x"]})
    line = _cli_error(capsys, "report", str(scores), "--records", str(other), "-o", str(tmp_path / "r.html"))
    assert f"--records {other}: no record matches the scores" in line


PLAN_RATES = ("--llm-tokens-per-second", "100", "--nli-pairs-per-second", "10", "--prompt-verdicts-per-second", "2")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--endpoints", "0"), "--endpoints: expected a whole number of at least 1, got 0"),
        (("--responses", "-5"), "--responses: expected a whole number of at least 1, got -5"),
        (("--llm-tokens-per-second", "0"), "--llm-tokens-per-second: expected a finite number above 0, got 0.0"),
        (("--nli-pairs-per-second", "-2"), "--nli-pairs-per-second: expected a finite number above 0"),
        (("--prompt-verdicts-per-second", "nan"), "--prompt-verdicts-per-second: expected a finite number above 0"),
        (("-S", "nli.runtime=bogus"), "nli.runtime: 'bogus' is not one of"),
        (("-S", "dataset=wikibio"), "--dataset toy and -S dataset=wikibio name two data sets"),
    ],
)
@pytest.mark.usefixtures("no_debug")
def test_a_plan_of_bad_counts_rates_or_settings_is_one_line(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], fragment: str
) -> None:
    assert fragment in _cli_error(capsys, "plan", "--dataset", "toy", *args)


@pytest.mark.usefixtures("no_debug")
def test_a_plan_out_under_a_file_is_refused_first(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    afile = tmp_path / "plain"
    afile.write_text("x")
    line = _cli_error(capsys, "plan", "--dataset", "toy", "-o", str(afile / "plan"))
    assert f"-o {afile / 'plan.json'}: {afile} is a file, not a folder" in line
    # --out, the spelling plan once took, still works
    line = _cli_error(capsys, "plan", "--dataset", "toy", "--out", str(afile / "plan"))
    assert f"-o {afile / 'plan.json'}: {afile} is a file, not a folder" in line


@pytest.mark.usefixtures("no_debug")
def test_a_plan_with_every_rate_stated_reads_no_bench_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run outside any checkout (the working folder elsewhere, the package installed without
    one): with every rate stated nothing of perf/ or data/toy is read; with one missing,
    the bench file is named with the options that replace it."""
    from hallulab import plan
    from hallulab.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(plan, "package_checkout", lambda: None)
    dataset = ("--dataset", "jsonl", "-S", f"dataset.path={TOY}", "--no-cache")
    assert main(["plan", *dataset, *PLAN_RATES]) == 0
    assert "Rates: 100 generated tokens/s" in capsys.readouterr().out
    line = _cli_error(capsys, "plan", *dataset, *PLAN_RATES[:4])
    assert "perf/results.json: not found under" in line and "--prompt-verdicts-per-second" in line


def test_the_language_check_judges_text_written_without_spaces() -> None:
    from hallulab.text.language import probably_not_english

    chinese = "玛丽·居里是一位波兰裔法国物理学家和化学家，她与丈夫皮埃尔·居里一起发现了钋和镭，并两次获得诺贝尔奖。"
    japanese = (
        "マリ・キュリーはポーランド出身の物理学者で、夫とともにポロニウムとラジウムを発見し、ノーベル賞を二度受賞した。"
    )
    english = (
        "Mao Zedong (毛泽东) was a Chinese revolutionary who founded the People's Republic of China, "
        "which he led as its chairman from its establishment until his death."
    )
    assert probably_not_english([("zh", chinese), ("ja", japanese), ("en", english)]) == ["zh", "ja"]


# ---------------------------------------------------------------- partial downloads


def test_a_stale_partial_download_is_removed_at_the_next_fetch(tmp_path: Path) -> None:
    """A killed fetch left `.<file>.<token>.part` beside its target: the next fetch of that data
    set removes it, even when this one fails (here: the server is down)."""
    from hallulab.data import fetch as fetching

    target = tmp_path / fetching.data_source("sac3_qa_halu").files[0].target
    target.parent.mkdir(parents=True)
    stale = target.parent / f".{target.name}.0123456789abcdef.part"
    stale.write_bytes(b"half a file")
    keep = target.parent / ".unrelated.part"
    keep.write_bytes(b"not ours")

    def down(url: str, *, timeout: float) -> Any:
        raise OSError("connection refused")

    with pytest.raises(fetching.DownloadError, match="connection refused"):
        fetching.fetch("sac3_qa_halu", tmp_path, opener=down)
    assert not stale.exists() and keep.exists()


def test_a_terminated_fetch_removes_its_partial_download(tmp_path: Path) -> None:
    """SIGTERM in the middle of a download (a server that sends part of a file, then waits):
    the command exits with SIGTERM's status and leaves no partial file."""
    import signal
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    release = threading.Event()
    started = threading.Event()

    class Stalling(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(1 << 20))
            self.end_headers()
            self.wfile.write(b"x" * 1024)
            self.wfile.flush()
            started.set()
            release.wait()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Stalling)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    root = tmp_path / "root"
    url = f"http://127.0.0.1:{server.server_address[1]}"
    command = [sys.executable, "-m", "hallulab.cli", "data", "fetch", "sac3_qa_halu", "--root", str(root)]
    process = subprocess.Popen([*command, "--base-url", url], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert started.wait(timeout=120), "the fetch never asked for the file"
        parts = [p for p in root.rglob("*.part")]
        assert parts, "a download in progress writes a partial file"
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=120)
    finally:
        release.set()
        if process.poll() is None:
            process.kill()
        process.communicate()
        server.shutdown()
        server.server_close()
    assert process.returncode == 128 + signal.SIGTERM
    assert list(root.rglob("*.part")) == []


# ---------------------------------------------------------------- hallulab nli train: refused before training


@pytest.fixture
def no_training(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Path]:
    """``hallulab nli train`` with a stand-in for the training (no model is trained): a refusal
    must come before it; a run that gets there writes a one-file model and is listed."""
    from hallulab.nli import recipe

    monkeypatch.delenv("HALLULAB_DEBUG", raising=False)
    monkeypatch.setenv("HALLULAB_MODEL_DIR", str(tmp_path / "model-home"))
    trained: list[Path] = []

    def stand_in(composed: Any, out: Path, root: Path | None, log: Any) -> recipe.TrainedNLI:
        out.mkdir(parents=True)
        (out / "config.json").write_text("{}")
        trained.append(out)
        return recipe.TrainedNLI({"train": {"pairs": 1}, "heldout_accuracy": {}}, {})

    monkeypatch.setattr(recipe, "train_recipe", stand_in)
    return trained


@pytest.mark.parametrize(
    ("setting", "fragment"),
    [
        ("nli_train.batch_size=0", "nli_train.batch_size: must be >= 1, got 0"),
        ("nli_train.sources.open_snli_dev=-5", "sources.open_snli_dev: expected null or a count >= 0, got -5"),
        ("nli_train.epochs=abc", "nli_train.epochs: expected an integer, got 'abc'"),
        ("nli_train.warmup_ratio=2", "nli_train.warmup_ratio: must be <= 1.0, got 2.0"),
        ("nli_train.max_length=2", "nli_train.max_length: must be >= 8, got 2"),
        ("nli_train.heldout_max_pairs=-1", "nli_train.heldout_max_pairs: must be >= 1, got -1"),
    ],
)
def test_nli_train_refuses_a_bad_recipe_setting_before_training(
    capsys: pytest.CaptureFixture[str], no_training: list[Path], tmp_path: Path, setting: str, fragment: str
) -> None:
    """A batch size of 0 was a ZeroDivisionError, a negative source count 'Sample larger than
    population', both tracebacks; now one line naming the setting, before any training."""
    line = _cli_error(capsys, "nli", "train", "-S", setting, "-o", str(tmp_path / "model"))
    assert fragment in line
    assert no_training == [] and not (tmp_path / "model").exists()


def test_nli_train_never_deletes_a_folder_it_did_not_write(
    capsys: pytest.CaptureFixture[str], no_training: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """-o a folder holding the user's file used to exit 0 after deleting the folder and the file;
    -o under a file, -o a file and -o . were tracebacks after training. Each is now refused in one
    line before training, and nothing is deleted; an empty folder, or one a previous run wrote
    (its hallulab-nli-train.json lists every file in it), is replaced."""
    from hallulab.nli.recipe import MANIFEST

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my notes")
    line = _cli_error(capsys, "nli", "train", "-o", str(mine))
    assert f"-o {mine}: holds files hallulab nli train did not write" in line and "notes.txt" in line
    assert (mine / "notes.txt").read_text() == "my notes"

    afile = tmp_path / "plain"
    afile.write_text("x")
    assert f"-o {afile / 'model'}: {afile} is a file, not a folder" in _cli_error(
        capsys, "nli", "train", "-o", str(afile / "model")
    )
    assert f"-o {afile}: is a file, not a folder" in _cli_error(capsys, "nli", "train", "-o", str(afile))
    assert afile.read_text() == "x"
    monkeypatch.chdir(mine)
    assert "-o .: is the current folder or holds it" in _cli_error(capsys, "nli", "train", "-o", ".")
    assert no_training == []

    # a new folder, then the same folder again: the command's own output is replaced
    from hallulab.cli import main

    model = tmp_path / "model"
    assert main(["nli", "train", "-o", str(model)]) == 0
    assert json.loads((model / MANIFEST).read_text())["files"] == ["config.json"]
    assert main(["nli", "train", "-o", str(model)]) == 0
    assert sorted(p.name for p in model.iterdir()) == ["config.json", MANIFEST] and len(no_training) == 2
    # ... but not once the user has put a file of theirs in it
    (model / "results.csv").write_text("mine")
    line = _cli_error(capsys, "nli", "train", "-o", str(model))
    assert "holds results.csv, which hallulab nli train did not write" in line
    assert (model / "results.csv").read_text() == "mine" and len(no_training) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["nli", "train", "-o", str(empty)]) == 0 and (empty / "config.json").is_file()
