"""Sharded scoring (hallulab.pipeline.sharding): an expensive stage split into S shards, each
computing its block of the batches a cold unsharded run makes, merged before aggregate into
the bytes the unsharded run writes; S = 1, 2 and 3."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest
import yaml

from hallulab.core.call_cache import CallCache, PartialResults, Shard, ShardRoundDone
from hallulab.dag import dvcgen
from hallulab.pipeline.sharding import merge_slices
from tests.conftest import ToyRun
from tests.workspace import BIN, dvc, environment, git


def _batch_dependent(batch: list[str]) -> list[str]:
    """A value that changes when the batch around an input changes, as padded float sums can."""
    context = hashlib.sha256("|".join(batch).encode()).hexdigest()[:8]
    return [f"{item}@{context}" for item in batch]


@pytest.mark.parametrize("count", [1, 2, 3])
@pytest.mark.parametrize("batch_size", [1, 4, 7])
def test_merged_shards_answer_as_a_cold_unsharded_run(tmp_path: Path, count: int, batch_size: int) -> None:
    inputs = [f"x{i % 23}" for i in range(40)]  # duplicates, as a request has them
    keys = [f"k-{item}" for item in inputs]
    with CallCache(tmp_path / "cold.sqlite") as cold:
        expected = cold.map(keys, inputs, _batch_dependent, batch_size=batch_size, spread=True)
    entries: dict[str, object] = {}
    for index in range(count):
        with CallCache(tmp_path / f"shard{index}.sqlite") as cache:  # each shard on its own machine
            cache.shard = Shard(index, count)
            with pytest.raises(ShardRoundDone):
                cache.map(keys, inputs, _batch_dependent, batch_size=batch_size, spread=True)
            assert not set(entries) & set(cache.shard_entries)  # the blocks do not overlap
            entries.update(cache.shard_entries)
    assert set(entries) == set(keys)  # and together they cover the request
    with CallCache(tmp_path / "merged.sqlite") as merged:
        merged.put_many((key, value, 0.0) for key, value in entries.items())

        def never(batch: list[str]) -> list[str]:
            raise AssertionError(f"the merge computed {batch}")

        assert merged.map(keys, inputs, never, batch_size=batch_size, spread=True) == expected


def _answers_three_of_five(calls: list[int]) -> object:
    """A model server that answers the first three requests of every batch of five and fails the
    rest, as a half-failed batch does: the first batch it fails part-way through stops the run."""

    def compute(batch: list[str]) -> list[str]:
        calls.append(len(batch))
        answered = {i: item.upper() for i, item in enumerate(batch) if i < 3}
        if len(answered) == len(batch):
            return [answered[i] for i in range(len(batch))]
        failed = {i: TimeoutError("no reply") for i in range(len(batch)) if i not in answered}
        raise PartialResults(answered, failed, f"{len(failed)} of {len(batch)} failed")

    return compute


@pytest.mark.parametrize("index", [0, 1])
def test_a_shard_keeps_the_replies_of_a_half_failed_batch_as_a_whole_run_does(tmp_path: Path, index: int) -> None:
    inputs = [f"x{i}" for i in range(20)]
    keys = [f"k-{item}" for item in inputs]
    with CallCache(tmp_path / "whole.sqlite") as whole:
        with pytest.raises(PartialResults):
            whole.map(keys, inputs, _answers_three_of_five([]), batch_size=5, spread=True)
        kept_whole = len(whole)
    assert kept_whole == 3  # the first batch's three replies, then the run stops
    with CallCache(tmp_path / "shard.sqlite") as cache:
        cache.shard = Shard(index, 2)
        with pytest.raises(PartialResults):
            cache.map(keys, inputs, _answers_three_of_five([]), batch_size=5, spread=True)
        assert len(cache) == kept_whole  # the shard's first batch, as many replies kept
        first = 0 if index == 0 else 10  # shard 1 owns batches 2 and 3 of 4
        expected = {f"k-x{i}": f"X{i}" for i in range(first, first + 3)}
        assert cache.get_many(list(expected)) == expected
        # resumed, the shard asks only for what it lacks: the two failed inputs, then the next batch
        calls: list[int] = []
        with pytest.raises(PartialResults):
            cache.map(keys, inputs, _answers_three_of_five(calls), batch_size=5, spread=True)
        assert calls == [2, 5]


def test_a_request_not_spread_is_computed_whole_in_a_shard(tmp_path: Path) -> None:
    with CallCache(tmp_path / "c.sqlite") as cache:
        cache.shard = Shard(1, 2)
        assert cache.map(["a", "b"], ["a", "b"], lambda batch: [x.upper() for x in batch]) == ["A", "B"]
        assert cache.shard_entries == {}


def test_a_shard_index_outside_the_count_is_refused() -> None:
    with pytest.raises(ValueError, match=r"0 \.\. 1"):
        Shard(2, 2)


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (["--shard", "2", "--shards", "2"], "--shard 2 --shards 2: the shard index must be 0 .. 1"),
        (["--shard", "0"], "--shard 0 needs --shards S"),
        (["--shards", "2"], "--shards 2 needs --shard I"),
        (["--shard", "0", "--shards", "0"], "--shards 0: a stage splits into at least 1 shard"),
        (["--merge-shards", "0"], "--merge-shards 0: a merge reads at least 1 shard"),
    ],
)
def test_a_stage_refuses_a_shard_setting_in_one_line_before_reading_anything(
    tmp_path: Path, arguments: list[str], named: str
) -> None:
    """Run from an empty folder: no params.yaml, no passages; the setting is named first."""
    stage = Path(__file__).resolve().parents[1] / "stages" / "generate.py"
    done = subprocess.run(
        [BIN / "python", stage, "--dataset", "toy", *arguments],
        cwd=tmp_path,
        env=environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("hallulab ")]
    assert len(errors) == 1 and named in errors[0] and "Traceback" not in done.stderr, done.stderr


def test_dvcyaml_refuses_zero_shards_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "dvc.yaml"
    assert dvcgen.main(["--shards", "0", "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "SHARDS=0" in error
    assert not out.exists()


def test_sharded_dvc_yaml_has_a_stage_per_shard_and_a_merge_before_aggregate() -> None:
    unsplit = dvcgen.build()["stages"]
    split = dvcgen.build(3)["stages"]
    nli = split["score_selfcheck_nli"]
    assert nli["foreach"] == [0, 1, 2] and "--shard ${item} --shards 3" in nli["do"]["cmd"]
    assert nli["do"]["outs"] == ["data/shards/${dataset.name}/score_selfcheck_nli/${item}-of-3.jsonl"]
    merge = split["merge_score_selfcheck_nli"]
    assert merge["outs"] == unsplit["score_selfcheck_nli"]["outs"] and merge["cmd"].endswith("--merge-shards 3")
    assert [d for d in merge["deps"] if d.startswith("data/shards/")] == [
        f"data/shards/${{dataset.name}}/score_selfcheck_nli/{i}-of-3.jsonl" for i in range(3)
    ]
    assert split["aggregate_selfcheck_nli"] == unsplit["aggregate_selfcheck_nli"]
    assert {"merge_generate", "merge_extract_response_tokens", "merge_score_hallucheck"} <= set(split)
    assert dvcgen.build(1) == dvcgen.build()


def test_a_merge_names_a_missing_slice(tmp_path: Path) -> None:
    (tmp_path / "0-of-2.jsonl").write_text('{"key": "k", "value": 1}\n')
    with CallCache(tmp_path / "c.sqlite") as cache, pytest.raises(Exception, match=r"1-of-2\.jsonl.*missing"):
        merge_slices(cache, [tmp_path / "0-of-2.jsonl", tmp_path / "1-of-2.jsonl"])


def _workspace(toy_run: ToyRun, destination: Path) -> Path:
    """A clone of the toy run with its outputs checked out of the shared DVC cache."""
    git(destination.parent, "clone", "-q", str(toy_run.root), destination.name)
    dvc(destination, "cache", "dir", "--local", dvc(toy_run.root, "cache", "dir").strip())
    dvc(destination, "checkout")
    return destination


def _score(root: Path, cache_dir: Path, *options: str) -> None:
    env = environment()
    env["HALLULAB_CACHE_DIR"] = str(cache_dir)  # a machine of its own: an empty call cache
    subprocess.run(
        [
            str(BIN / "python"),
            "stages/score.py",
            *("--method", "selfcheck_nli", "--dataset", "toy", "--params", "params-small-batches.yaml"),
            *options,
        ],
        cwd=root,
        env={**env, "PYTHONPATH": "src", "PYTHONHASHSEED": "0"},
        check=True,
        capture_output=True,
    )


@pytest.mark.slow
def test_sharded_nli_scores_are_byte_identical_to_the_unsharded_run(toy_run: ToyRun, tmp_path: Path) -> None:
    """score_selfcheck_nli on the toy set in batches of 4 pairs (chunks of 32: four of them),
    each shard on a machine with an empty call cache, merged on another: the scores file has the
    bytes of a cold unsharded run for S = 3 (the four chunks split unevenly); S = 2 runs as DVC
    stages in the test below, and one shard holding every chunk is the unit tests' case."""
    root = _workspace(toy_run, tmp_path / "ws")
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["nli"]["batch_size"] = 4
    (root / "params-small-batches.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    scores = root / "data/scores/toy/selfcheck_nli.json"
    _score(root, tmp_path / "cache-unsharded")
    unsharded = scores.read_bytes()
    for count in (3,):
        scores.unlink()
        for index in range(count):
            _score(root, tmp_path / f"cache-{count}-{index}", "--shard", str(index), "--shards", str(count))
            assert (root / f"data/shards/toy/score_selfcheck_nli/{index}-of-{count}.jsonl").is_file()
        assert not scores.exists()  # a shard writes its slice only
        _score(root, tmp_path / f"cache-{count}-merge", "--merge-shards", str(count))
        assert scores.read_bytes() == unsharded, count


@pytest.mark.slow
def test_dvc_runs_each_shard_as_a_stage_and_merges_before_aggregate(toy_run: ToyRun, tmp_path: Path) -> None:
    """`make dvcyaml SHARDS=2` in a clone of the toy run: `dvc repro` runs score_selfcheck_nli@0
    and @1 and the merge, whose output is the committed unsharded file, byte for byte."""
    root = _workspace(toy_run, tmp_path / "ws")
    committed = (root / "data/scores/toy/selfcheck_nli.json").read_bytes()
    subprocess.run(
        ["make", "-o", f"{BIN.parent}/.hallulab-installed", "dvcyaml", "SHARDS=2", f"VENV={BIN.parent}"],
        cwd=root,
        env={**environment(), "PYTHONPATH": str(root / "src")},  # the clone's package writes the clone's dvc.yaml
        check=True,
        capture_output=True,
    )
    log = dvc(root, "repro", "merge_score_selfcheck_nli")
    for stage in ("score_selfcheck_nli@0", "score_selfcheck_nli@1", "merge_score_selfcheck_nli"):
        assert f"Running stage '{stage}'" in log, stage
    assert (root / "data/scores/toy/selfcheck_nli.json").read_bytes() == committed
    dvc(root, "repro", "score_selfcheck_nli@1")  # one shard by its name, as on machine 1
