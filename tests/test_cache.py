from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hallulab.core.call_cache import CacheFileError, CallCache, cache_key
from tests.workspace import HANG_GUARD_S


def test_hit_after_miss_and_miss_on_any_key_change(tmp_path: Path) -> None:
    calls: list[str] = []

    def compute(items: list[str]) -> list[str]:
        calls.extend(items)
        return [item.upper() for item in items]

    with CallCache(tmp_path / "c.sqlite") as cache:
        keys = [cache_key("upper", {"model": "m", "temperature": 0.0}, text) for text in ("a", "b", "a")]
        assert cache.map(keys, ["a", "b", "a"], compute) == ["A", "B", "A"]
        assert calls == ["a", "b"]  # duplicates computed once
        assert cache.map(keys, ["a", "b", "a"], compute) == ["A", "B", "A"]
        assert calls == ["a", "b"]
        assert cache.stats.hits == 2 and cache.stats.misses == 2
        changed = [cache_key("upper", {"model": "m", "temperature": 0.7}, "a")]
        cache.map(changed, ["a"], compute)
        assert calls == ["a", "b", "a"]


def test_a_labelled_request_reports_its_calls_and_their_measured_model_seconds(tmp_path: Path) -> None:
    """Per label: the distinct calls, those computed in this run, and the model seconds of all
    of them as measured when computed, so a warm run reports the same work at no new cost."""

    def slow_square(batch: list[int]) -> list[int]:
        time.sleep(0.01 * len(batch))
        return [x * x for x in batch]

    keys = [cache_key("sq", x) for x in (1, 2, 3, 3)]
    with CallCache(tmp_path / "c.sqlite") as cold:
        cold.map(keys, [1, 2, 3, 3], slow_square, batch_size=2, progress="squares")
        cold.map(keys[:1], [1], slow_square)  # unlabelled: counted in the totals only
        first = cold.stats.as_dict()["requests"]
    assert list(first) == ["squares"]
    assert first["squares"]["calls"] == 3 and first["squares"]["computed"] == 3
    assert first["squares"]["model_seconds"] >= 0.03
    with CallCache(tmp_path / "c.sqlite") as warm:
        warm.map(keys, [1, 2, 3, 3], slow_square, progress="squares")
        again = warm.stats.as_dict()["requests"]["squares"]
    assert again["calls"] == 3 and again["computed"] == 0
    assert again["model_seconds"] == pytest.approx(first["squares"]["model_seconds"], abs=1e-3)


def test_key_is_independent_of_dict_order() -> None:
    assert cache_key({"a": 1, "b": 2}) == cache_key({"b": 2, "a": 1})
    assert cache_key("x", 1) != cache_key("x", "1")


_WORKER = textwrap.dedent(
    """
    import sys, time
    from hallulab.core.call_cache import CallCache, cache_key
    path, start, count, delay = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    items = [str(i) for i in range(start, start + count)]
    def compute(batch):
        time.sleep(delay)
        return [int(x) * 2 for x in batch]
    with CallCache(path) as cache:
        cache.map([cache_key("double", x) for x in items], items, compute, batch_size=5)
    """
)


def _worker(path: Path, start: int, count: int, delay: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", _WORKER, str(path), str(start), str(count), str(delay)])


def test_killed_run_resumes_from_committed_batches(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    process = _worker(path, 0, 100, 0.2)
    try:
        for _ in range(200):
            if path.exists():
                with CallCache(path) as cache:
                    if len(cache) >= 10:
                        break
            subprocess.run(["sleep", "0.05"], check=True)
    finally:
        process.kill()
        process.wait()
    with CallCache(path) as cache:
        done = len(cache)
        assert 10 <= done < 100
        computed: list[str] = []

        def compute(batch: list[str]) -> list[int]:
            computed.extend(batch)
            return [int(x) * 2 for x in batch]

        items = [str(i) for i in range(100)]
        values = cache.map([cache_key("double", x) for x in items], items, compute)
    assert values == [2 * i for i in range(100)]
    assert len(computed) == 100 - done  # only what the killed run had not finished


@pytest.mark.parametrize("overlap", [0, 25])
def test_two_concurrent_writers_share_one_cache(tmp_path: Path, overlap: int) -> None:
    path = tmp_path / "c.sqlite"
    CallCache(path).close()
    first, second = _worker(path, 0, 50, 0.01), _worker(path, 50 - overlap, 50, 0.01)
    assert first.wait(timeout=HANG_GUARD_S) == 0 and second.wait(timeout=HANG_GUARD_S) == 0
    with CallCache(path) as cache:
        assert len(cache) == 100 - overlap
        items = [str(i) for i in range(100 - overlap)]
        found = cache.get_many([cache_key("double", x) for x in items])
        assert sorted(found.values()) == [2 * i for i in range(100 - overlap)]


_OPENER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from hallulab.core.call_cache import CallCache
    folder, start_at, count = Path(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    failures = 0
    for i in range(count):
        while time.time() < start_at + 0.1 * i:  # both processes open file i at the same moment
            time.sleep(0.0005)
        try:
            # SQLite's busy wait: a hang guard (the other process holds the lock for milliseconds)
            with CallCache(folder / f"c{i}.sqlite", timeout=30) as cache:
                cache.put_many([(f"k{i}", i, 0.0)])
        except Exception as error:
            failures += 1
            print(type(error).__name__, error, file=sys.stderr)
    print(failures)
    """
)


def test_two_processes_creating_the_same_new_cache_file_never_fail(tmp_path: Path) -> None:
    """`dvc queue start -j 2` on an empty cache folder: both workers create calls.sqlite at once."""
    import time

    start_at = time.time() + 2.0
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _OPENER, str(tmp_path), str(start_at), "60"], stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    failures = [int(p.communicate(timeout=HANG_GUARD_S)[0].strip().splitlines()[-1]) for p in processes]
    assert failures == [0, 0]
    for i in range(60):
        with CallCache(tmp_path / f"c{i}.sqlite") as cache:
            assert len(cache) == 1


def test_a_corrupt_cache_file_is_named_with_the_way_out(tmp_path: Path) -> None:
    path = tmp_path / "calls.sqlite"
    path.write_bytes(b"<html>not a database</html>" * 200)
    with pytest.raises(CacheFileError, match=rf"{path}.*delete it.*HALLULAB_CACHE_DIR"):
        CallCache(path)


def test_partial_results_of_a_failed_batch_are_kept(tmp_path: Path) -> None:
    from hallulab.core.call_cache import PartialResults

    calls: list[list[str]] = []

    def flaky(items: list[str]) -> list[str]:
        calls.append(items)
        if len(calls) == 1:
            raise PartialResults({0: items[0].upper(), 2: items[2].upper()}, {1: TimeoutError("slow")}, "1 of 3 failed")
        return [item.upper() for item in items]

    with CallCache(tmp_path / "c.sqlite") as cache:
        keys = [cache_key("upper", x) for x in "abc"]
        with pytest.raises(PartialResults, match="1 of 3 failed"):
            cache.map(keys, list("abc"), flaky)
        assert cache.map(keys, list("abc"), flaky) == ["A", "B", "C"]
    assert calls[1] == ["b"]  # the re-run asked only for the reply that never came


def test_a_damaged_page_the_open_check_misses_is_named_on_first_read(tmp_path: Path) -> None:
    """Long values live on overflow pages, which the open check's COUNT(*) never reads: damage
    there once passed the open and crashed the first read with a traceback."""
    path = tmp_path / "calls.sqlite"
    with CallCache(path) as cache:
        cache.put_many((f"k{i}", "x" * 20_000, 0.1) for i in range(20))
    sqlite3.connect(path).execute("PRAGMA wal_checkpoint(TRUNCATE)").connection.close()
    raw = bytearray(path.read_bytes())
    middle = len(raw) // 2
    raw[middle : middle + 4096] = b"\xff" * 4096  # one overflow page overwritten
    path.write_bytes(bytes(raw))
    cache = CallCache(path)  # the open check passes
    try:
        with pytest.raises(CacheFileError, match=rf"call cache {path} cannot be used .*delete it"):
            cache.get_many([f"k{i}" for i in range(20)])
    finally:
        cache.close()
