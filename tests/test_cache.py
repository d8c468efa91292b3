from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hallulab.cache import CallCache, cache_key


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


def test_key_is_independent_of_dict_order() -> None:
    assert cache_key({"a": 1, "b": 2}) == cache_key({"b": 2, "a": 1})
    assert cache_key("x", 1) != cache_key("x", "1")


_WORKER = textwrap.dedent(
    """
    import sys, time
    from hallulab.cache import CallCache, cache_key
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
    assert first.wait(timeout=120) == 0 and second.wait(timeout=120) == 0
    with CallCache(path) as cache:
        assert len(cache) == 100 - overlap
        items = [str(i) for i in range(100 - overlap)]
        found = cache.get_many([cache_key("double", x) for x in items])
        assert sorted(found.values()) == [2 * i for i in range(100 - overlap)]
