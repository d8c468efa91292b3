"""An expensive stage split into S shards, each its own DVC stage, merged before aggregate.

``make dvcyaml SHARDS=3`` turns each stage whose step declares ``shards`` (the generate step, a
method's or an artifact's spec: :meth:`hallulab.pipeline.graph.PipelineGraph.sharded_stages`)
into a ``foreach`` over shard indices (``dvc repro score_selfcheck_nli@2`` runs shard 2, on any
machine) and adds a ``merge_<stage>`` stage that writes the stage's usual outputs.

- **Shard ``i`` of ``S``** (``--shard i --shards S``) runs the stage's step with the call cache
  in shard mode (:class:`hallulab.core.call_cache.Shard`). The first request the step spreads (its batched
  LLM or NLI calls) is cut into the batches a cold, unsharded run would make, and the shard
  computes the i-th contiguous block of them. It writes every key of its block with its value
  to ``data/shards/<dataset>/<stage>/<i>-of-<S>.jsonl`` (its only output, cached by DVC and
  pushed to a remote like any other), then stops.
- **The merge** (``--merge-shards S``) adds the S slices to the local call cache and runs the
  step unsharded. The spread request is then answered from the cache entirely, and any later
  request (a chained method's second round: HalluCheck's answers to its questions) is computed
  there.

Each value was computed in the same batch as in an unsharded run, so the merged outputs are
byte-identical to the unsharded run's (``tests/test_sharding.py``, S = 1, 2, 3). What a shard
spares the merge is the first spread request: the whole model work of generate, the NLI
stages and teacher forcing, the first round of the chained methods.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hallulab.core.call_cache import CallCache, Shard, ShardRoundDone, ShardSettingError
from hallulab.core.errors import UserFacingError
from hallulab.core.io import atomic_open

T = TypeVar("T")


class MissingShardError(RuntimeError, UserFacingError):
    """A merge found a shard's slice missing or unreadable."""


def slice_path(stage: str, dataset: str, index: int | str, count: int) -> Path:
    """Where shard ``index`` of ``count`` writes its entries (a template when ``index`` is ``${item}``)."""
    return Path("data") / "shards" / dataset / stage / f"{index}-of-{count}.jsonl"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--shard I --shards S`` (run one shard) and ``--merge-shards S`` (merge S shards)."""
    parser.add_argument("--shard", type=int, help="run shard I (0-based) of --shards S: its block of the model calls")
    parser.add_argument("--shards", type=int, help="how many shards the stage is split into")
    parser.add_argument("--merge-shards", type=int, help="merge the slices of S shards, then run the step")


def shard_of(args: argparse.Namespace) -> Shard | None:
    """The shard the arguments name (None: not a shard run), checked before the stage reads
    anything: ``--shard`` without ``--shards``, an index outside ``0 .. S-1`` or a count or merge
    below 1 is a one-line :class:`hallulab.core.call_cache.ShardSettingError`."""
    if args.merge_shards is not None and args.merge_shards < 1:
        raise ShardSettingError(f"--merge-shards {args.merge_shards}: a merge reads at least 1 shard")
    if args.merge_shards is not None and (args.shard is not None or args.shards is not None):
        raise ShardSettingError("--merge-shards runs the merge: it does not take --shard / --shards")
    if args.shard is None:
        if args.shards is not None:
            last = args.shards - 1
            raise ShardSettingError(f"--shards {args.shards} needs --shard I, the shard to run (0 .. {last})")
        return None
    if args.shards is None:
        raise ShardSettingError(f"--shard {args.shard} needs --shards S, how many shards the stage is split into")
    return Shard(args.shard, args.shards)


def run_sharded(
    args: argparse.Namespace, stage: str, dataset: str, cache: CallCache, step: Callable[[], T], log: logging.Logger
) -> T | None:
    """``step()`` as the arguments say: a shard run writes its slice and returns None; a merge
    adds every slice to ``cache`` first; otherwise the step runs as it always does."""
    shard = shard_of(args)
    if shard is not None:
        cache.shard = shard
        try:
            step()
        except ShardRoundDone as done:
            log.info("%s: %s", stage, done)
        else:
            log.info("%s: the step spread no request; this shard's slice is empty", stage)
        path = slice_path(stage, dataset, args.shard, args.shards)
        entries = cache.shard_entries
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path) as handle:  # json's NaN / Infinity kept, as the call cache keeps them
            handle.writelines(
                json.dumps({"key": k, "value": entries[k]}, ensure_ascii=False) + "\n" for k in sorted(entries)
            )
        return None
    if args.merge_shards is not None:
        merge_slices(cache, [slice_path(stage, dataset, i, args.merge_shards) for i in range(args.merge_shards)])
    return step()


def merge_slices(cache: CallCache, paths: list[Path]) -> int:
    """Add every entry of the shard slices at ``paths`` to ``cache``; the number added."""
    entries: list[tuple[str, Any, float]] = []
    for path in paths:
        if not path.is_file():
            raise MissingShardError(f"{path}: the shard's slice is missing; run its stage first (dvc repro)")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            try:
                row = json.loads(line)
                entries.append((str(row["key"]), row["value"], 0.0))
            except (ValueError, KeyError, TypeError) as error:
                raise MissingShardError(f"{path}:{number}: not a shard entry ({error})") from None
    cache.put_many(entries)
    return len(entries)
