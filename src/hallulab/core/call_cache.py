"""A content-addressed cache for expensive calls (spaCy parses, model calls).

Key: the SHA-256 of the canonical JSON of everything that determines the result
(kind of call, model id + version/revision or file hash, decoding parameters, seed,
input). Value: the JSON result and the seconds it took to compute, so hit rate and
time saved can be reported per stage.

Storage: one SQLite file in WAL mode. Every completed batch is committed, so a killed
run resumes from what it had finished; SQLite's locking lets several DVC queue workers
share the file safely (a writer waits up to ``timeout`` seconds for the lock).
A request a stage spreads over shards (``spread=True``: the LLM and NLI calls) is cut into
batches exactly as a cold, unsharded run cuts it. A shard run (:attr:`CallCache.shard`)
computes only its contiguous block of those batches, keeps what they hold in
:attr:`CallCache.shard_entries` and stops with :class:`ShardRoundDone`. Every value therefore
comes out of the same batch, with the same padding and the same float sums, as in an unsharded
run: once the shards' entries are merged into one cache, the unsharded step finds them all and
writes the same bytes (:mod:`hallulab.pipeline.sharding`).

The default location is outside the repository (``$HALLULAB_CACHE_DIR`` or
``~/.cache/hallulab``) because ``dvc exp run --queue`` runs each experiment in its own
temporary copy of the workspace; a repo-relative path would not be shared.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hallulab.core.errors import UserFacingError

CACHE_DIR_ENV = "HALLULAB_CACHE_DIR"
log = logging.getLogger("hallulab.core.call_cache")


def _progress_bar(label: str | None, *, hits: int, misses: int) -> Any:
    """Log a labelled request's hits and misses; a tqdm bar over the misses (None: no bar)."""
    if label is None:
        return None
    log.info("%s: %d cached, %d to compute", label, hits, misses)
    if not misses:
        return None
    from tqdm import tqdm

    return tqdm(total=misses, desc=label, unit="call", mininterval=10)


class PartialResults(RuntimeError, UserFacingError):
    """Some items of a batch failed. ``results`` maps positions in the batch to the values that
    came back; :meth:`CallCache.map` stores those before re-raising, so a paid reply is never
    lost and a re-run asks only for what is missing."""

    def __init__(self, results: dict[int, Any], errors: dict[int, BaseException], message: str) -> None:
        self.results = results
        self.errors = errors
        first = next(iter(errors.values()), None)
        super().__init__(f"{message}; first error: {first}" if first is not None else message)


#: where models made or converted on this machine are kept: converted copies of GGUF files, saved
#: OpenVINO graphs, and the offline NLI model ``hallulab nli train`` writes (``nli_minilm``)
MODEL_DIR_ENV = "HALLULAB_MODEL_DIR"


def model_dir() -> Path:
    """``$HALLULAB_MODEL_DIR``, else ``models/`` beside the call cache (``~/.cache/hallulab/models``)."""
    root = os.environ.get(MODEL_DIR_ENV)
    return Path(root) if root else default_cache_path().parent / "models"


def default_cache_path() -> Path:
    root = os.environ.get(CACHE_DIR_ENV)
    if root:
        return Path(root) / "calls.sqlite"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "hallulab" / "calls.sqlite"


def cache_key(*parts: Any) -> str:
    """SHA-256 of the canonical JSON of ``parts`` (sorted keys, no whitespace)."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass
class RequestCost:
    """What one kind of labelled request (``map(..., progress=label)``: an LLM role, NLI pairs,
    BERTScore pairs) asked of the cache in a stage: its distinct calls, how many were computed
    in this run, and the model seconds of all of them as timed when each was computed (a hit
    carries the seconds its computation took, so a warm run still reports the work's cost)."""

    calls: int = 0
    computed: int = 0
    model_seconds: float = 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {"calls": self.calls, "computed": self.computed, "model_seconds": round(self.model_seconds, 3)}


@dataclass
class CacheStats:
    """Counts for one stage's use of the cache, and per request label its cost."""

    hits: int = 0
    misses: int = 0
    seconds_saved: float = 0.0
    seconds_computing: float = 0.0
    requests: dict[str, RequestCost] = field(default_factory=dict)

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "hits": self.hits,
            "misses": self.misses,
            "hit_rate": round(self.hit_rate, 4),
            "seconds_saved": round(self.seconds_saved, 3),
            "seconds_computing": round(self.seconds_computing, 3),
            "requests": {label: cost.as_dict() for label, cost in self.requests.items()},
        }

    def add_request(self, label: str, calls: int, computed: int, model_seconds: float) -> None:
        cost = self.requests.setdefault(label, RequestCost())
        cost.calls += calls
        cost.computed += computed
        cost.model_seconds += model_seconds


class CacheFileError(RuntimeError, UserFacingError):
    """The cache file cannot be used (corrupt, not SQLite, unwritable); names the file."""


class ShardSettingError(ValueError, UserFacingError):
    """A shard index or count that names no shard (``--shard 2 --shards 2``, ``--shards 0``)."""


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (0-based) of ``count``: the block of a spread request's batches it computes."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ShardSettingError(f"--shards {self.count}: a stage splits into at least 1 shard")
        if not 0 <= self.index < self.count:
            raise ShardSettingError(
                f"--shard {self.index} --shards {self.count}: the shard index must be 0 .. {self.count - 1}"
            )

    def owns(self, batch: int, batches: int) -> bool:
        """Whether batch ``batch`` of ``batches`` falls in this shard's contiguous block."""
        return batch * self.count // batches == self.index


class ShardRoundDone(Exception):
    """A shard run has computed its block of the first request spread over shards."""


class CallCache:
    """SQLite-backed key -> JSON value store with per-entry compute time.

    Opening is safe when several processes create the same new file at once (``dvc queue
    start -j 2`` on an empty cache folder): the first open, which switches the file to WAL
    mode and creates the table, runs under an inter-process file lock, and a ``database is
    locked`` answer to it is retried until ``timeout``. A corrupt or foreign file is an error
    that names the file and how to recover.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, timeout: float = 120.0) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.timeout = timeout
        try:
            self._conn = self._open()
        except sqlite3.DatabaseError as error:
            raise self._unusable(error) from None
        self.stats = CacheStats()
        #: set for a shard run: spread requests compute only this shard's batches
        self.shard: Shard | None = None
        #: a shard run's entries: every key of its batches and its value
        self.shard_entries: dict[str, Any] = {}

    def _unusable(self, error: sqlite3.DatabaseError) -> CacheFileError:
        return CacheFileError(
            f"call cache {self.path} cannot be used ({error}); delete it (only cached model calls are lost) "
            f"or point {CACHE_DIR_ENV} at another folder"
        )

    def _damaged(self, error: sqlite3.DatabaseError) -> bool:
        """A damaged file (a page the open check did not read), not a busy one."""
        return not (isinstance(error, sqlite3.OperationalError) and "locked" in str(error))

    def _open(self) -> sqlite3.Connection:
        from filelock import FileLock

        deadline = time.monotonic() + self.timeout
        with FileLock(str(self.path) + ".lock", timeout=self.timeout):
            while True:
                conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
                try:
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.execute("PRAGMA synchronous=NORMAL")
                    conn.execute(
                        "CREATE TABLE IF NOT EXISTS calls ("
                        " key TEXT PRIMARY KEY, value TEXT NOT NULL, seconds REAL NOT NULL, created REAL NOT NULL)"
                    )
                    conn.execute("SELECT COUNT(*) FROM calls LIMIT 1").fetchone()
                    return conn
                except sqlite3.OperationalError as error:
                    conn.close()
                    if "locked" not in str(error) or time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
                except BaseException:
                    conn.close()
                    raise

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> CallCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """The cached values among ``keys`` (missing keys are absent); updates hit stats."""
        found: dict[str, Any] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT key, value, seconds FROM calls WHERE key IN ({marks})"
            try:
                rows = self._conn.execute(query, chunk).fetchall()
            except sqlite3.DatabaseError as error:
                if self._damaged(error):
                    raise self._unusable(error) from None
                raise
            for key, value, seconds in rows:
                found[key] = json.loads(value)
                self.stats.seconds_saved += seconds
        self.stats.hits += len(found)
        self.stats.misses += len(unique) - len(found)
        return found

    def put_many(self, items: Iterable[tuple[str, Any, float]]) -> None:
        """Store ``(key, value, seconds)`` triples in one transaction (insert-or-ignore)."""
        rows = [(k, json.dumps(v, ensure_ascii=False), float(s), time.time()) for k, v, s in items]
        if not rows:
            return
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.executemany("INSERT OR IGNORE INTO calls VALUES (?, ?, ?, ?)", rows)
            self._conn.execute("COMMIT")
        except sqlite3.DatabaseError as error:
            self._conn.execute("ROLLBACK")
            if self._damaged(error):
                raise self._unusable(error) from None
            raise
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self.stats.seconds_computing += sum(r[2] for r in rows)

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def map(
        self,
        keys: Sequence[str],
        inputs: Sequence[Any],
        compute: Callable[[list[Any]], list[Any]],
        *,
        batch_size: int = 64,
        progress: str | None = None,
        spread: bool = False,
    ) -> list[Any]:
        """Values for ``inputs``, computing only the misses, ``batch_size`` at a time.

        ``compute`` receives a list of distinct missing inputs and returns their values in
        order. Each batch is committed before the next starts, so a killed run loses at most
        one batch. Duplicate keys are computed once. With a ``progress`` label, the counts
        of hits and misses are logged and a progress bar (stderr, also in DVC's logs) runs
        over the misses. A ``spread`` request in a shard run computes the shard's batches only
        and raises :class:`ShardRoundDone` (module docstring).
        """
        if len(keys) != len(inputs):
            raise ValueError("keys and inputs must have the same length")
        if spread and self.shard is not None:
            self._map_shard(self.shard, keys, inputs, compute, batch_size)
        seconds_before = self.stats.seconds_saved + self.stats.seconds_computing
        results = self.get_many(keys)
        missing: dict[str, Any] = {}
        for key, item in zip(keys, inputs, strict=True):
            if key not in results and key not in missing:
                missing[key] = item
        pending = list(missing.items())
        batches = [pending[start : start + batch_size] for start in range(0, len(pending), batch_size)]
        bar = _progress_bar(progress, hits=len(keys) - len(pending), misses=len(pending))
        try:
            results.update(self._compute_batches(batches, compute, bar))
        finally:
            if bar is not None:
                bar.close()
        if progress is not None:
            spent = self.stats.seconds_saved + self.stats.seconds_computing - seconds_before
            self.stats.add_request(progress, len(results), len(pending), spent)
        return [results[key] for key in keys]

    def _compute_batches(
        self, batches: Sequence[Sequence[tuple[str, Any]]], compute: Callable[[list[Any]], list[Any]], bar: Any
    ) -> dict[str, Any]:
        """The one batch loop of sharded and unsharded requests: compute each batch of ``(key,
        input)`` pairs and commit its values before the next starts. A batch that fails part-way
        (:class:`PartialResults`) has the values that did come back stored before the error goes
        on, so a paid reply is never lost, in a shard as in a whole run."""
        computed: dict[str, Any] = {}
        for batch in batches:
            began = time.perf_counter()
            try:
                values = compute([item for _, item in batch])
            except PartialResults as partial:
                per_item = (time.perf_counter() - began) / max(len(batch), 1)
                self.put_many((batch[i][0], value, per_item) for i, value in partial.results.items())
                raise
            if len(values) != len(batch):
                raise RuntimeError(f"compute returned {len(values)} values for {len(batch)} inputs")
            per_item = (time.perf_counter() - began) / max(len(batch), 1)
            self.put_many((key, value, per_item) for (key, _), value in zip(batch, values, strict=True))
            computed.update({key: value for (key, _), value in zip(batch, values, strict=True)})
            if bar is not None:
                bar.update(len(batch))
        return computed

    def _map_shard(
        self,
        shard: Shard,
        keys: Sequence[str],
        inputs: Sequence[Any],
        compute: Callable[[list[Any]], list[Any]],
        batch_size: int,
    ) -> None:
        """Compute ``shard``'s block of the request's batches (cut over every distinct key, as
        a cold run cuts its misses) through the one batch loop, each batch asking only for what
        the cache lacks; record the block in :attr:`shard_entries`, then stop."""
        distinct: dict[str, Any] = {}
        for key, item in zip(keys, inputs, strict=True):
            distinct.setdefault(key, item)
        items = list(distinct.items())
        batches = [items[start : start + batch_size] for start in range(0, len(items), batch_size)]
        mine = [batch for number, batch in enumerate(batches) if shard.owns(number, len(batches))]
        found = self.get_many([key for batch in mine for key, _ in batch])
        todo = [[(key, item) for key, item in batch if key not in found] for batch in mine]
        computed = self._compute_batches([batch for batch in todo if batch], compute, None)
        found.update(computed)
        self.shard_entries.update({key: found[key] for batch in mine for key, _ in batch})
        raise ShardRoundDone(
            f"shard {shard.index} of {shard.count}: {sum(map(len, mine))} of the request's {len(items)} distinct "
            f"calls ({len(mine)} of {len(batches)} batches of {batch_size}), {len(computed)} computed, the rest cached"
        )
