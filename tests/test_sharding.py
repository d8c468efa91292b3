"""Sharded scoring (hallulab.pipeline.sharding): an expensive stage split into S shards, each
computing its block of the batches a cold unsharded run makes, merged before aggregate into
the bytes the unsharded run writes; S = 1, 2 and 3."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest
import yaml

from hallulab.cache import CallCache, Shard, ShardRoundDone
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


def test_a_request_not_spread_is_computed_whole_in_a_shard(tmp_path: Path) -> None:
    with CallCache(tmp_path / "c.sqlite") as cache:
        cache.shard = Shard(1, 2)
        assert cache.map(["a", "b"], ["a", "b"], lambda batch: [x.upper() for x in batch]) == ["A", "B"]
        assert cache.shard_entries == {}


def test_a_shard_index_outside_the_count_is_refused() -> None:
    with pytest.raises(ValueError, match=r"0 \.\. 1"):
        Shard(2, 2)


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
    bytes of a cold unsharded run, for S = 1, 2 and 3."""
    root = _workspace(toy_run, tmp_path / "ws")
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["nli"]["batch_size"] = 4
    (root / "params-small-batches.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    scores = root / "data/scores/toy/selfcheck_nli.json"
    _score(root, tmp_path / "cache-unsharded")
    unsharded = scores.read_bytes()
    for count in (1, 2, 3):
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
