"""The response cache: key recipe, modes, persistence, concurrent writers, broken files."""

from __future__ import annotations

import copy
import hashlib
import multiprocessing
import re
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from assay.cache import (
    DEFAULT_CACHE_PATH,
    CacheMiss,
    CacheMode,
    CacheStats,
    ResponseCache,
    cache_key,
)
from assay.errors import UsageError, UserError

IDENTITY: dict[str, Any] = {
    "provider": "openai",
    "model": "gpt-4o-mini",
    "base_url": "https://api.openai.com/v1",
    "body": {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "Where is my refund? ü"}],
        "temperature": 0.0,
        "max_tokens": 256,
    },
}
REPLY = {"output": "It is on its way.", "token_usage": {"input": 12, "output": 6}}


def _key(identity: dict[str, Any] = IDENTITY, **kwargs: Any) -> str:
    return cache_key("target", identity, **{"repeat_index": 0, **kwargs})


def _changed(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A deep copy of IDENTITY with one field replaced."""
    identity = copy.deepcopy(IDENTITY)
    node = identity
    for name in path[:-1]:
        node = node[name]
    node[path[-1]] = value
    return identity


# -- keys ---------------------------------------------------------------------------------


def test_key_is_the_sha256_of_the_canonical_json() -> None:
    identity = {"model": "m", "body": {"b": [1, 2.5, None, True], "a": "é"}}
    canonical = (
        '{"format":1,"identity":{"body":{"a":"é","b":[1,2.5,null,true]},"model":"m"},'
        '"kind":"judge","repeat_index":2,"template_version":"abc123"}'
    )
    key = cache_key("judge", identity, repeat_index=2, template_version="abc123")
    assert key == hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def test_key_ignores_dict_key_order() -> None:
    reordered = {
        "body": {
            "max_tokens": 256,
            "temperature": 0.0,
            "messages": [{"content": "Where is my refund? ü", "role": "user"}],
            "model": "gpt-4o-mini",
        },
        "base_url": "https://api.openai.com/v1",
        "model": "gpt-4o-mini",
        "provider": "openai",
    }
    assert _key(reordered) == _key(IDENTITY)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("provider",), "anthropic"),
        (("model",), "gpt-4o"),
        (("base_url",), "http://localhost:8000/v1"),
        (("body", "model"), "gpt-4o"),
        (("body", "temperature"), 0.7),
        (("body", "temperature"), 1e-17),
        (("body", "max_tokens"), 257),
        (("body", "messages"), [{"role": "user", "content": "Where is my refund?"}]),
        (("body", "seed"), 1),
    ],
)
def test_key_changes_with_every_identity_field(path: tuple[str, ...], value: Any) -> None:
    assert _key(_changed(path, value)) != _key(IDENTITY)


def test_key_changes_with_kind_repeat_index_and_template_version() -> None:
    keys = {
        _key(),
        _key(repeat_index=1),
        _key(template_version="v1"),
        _key(template_version="v2"),
        cache_key("judge", IDENTITY, repeat_index=0),
    }
    assert len(keys) == 5


@pytest.mark.parametrize(
    ("identity", "message"),
    [
        ({"body": {"x": object()}}, "cache identity $.body.x: object"),
        ({"body": {1: "a"}}, "cache identity $.body: key 1 is not a string"),
        ({"stop": {"a", "b"}}, "cache identity $.stop: set"),
        ({"body": {"t": float("nan")}}, "cache identity $.body.t: nan is not a JSON number"),
        ({"body": [b"raw"]}, "cache identity $.body[0]: bytes"),
    ],
)
def test_non_json_identity_is_a_type_error(identity: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match="^" + re.escape(message)):
        cache_key("target", identity, repeat_index=0)


# -- modes --------------------------------------------------------------------------------


def test_use_mode_misses_then_hits_and_counts(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.db", CacheMode.USE) as cache:
        key = _key()
        assert cache.get(key) is None
        cache.put(key, REPLY, kind="target")
        assert cache.get(key) == REPLY
        assert cache.get(key) == REPLY
        assert cache.stats == CacheStats(hits=2, misses=1, writes=1)


def test_the_file_is_created_by_the_first_write_only(tmp_path: Path) -> None:
    path = tmp_path / ".assay" / "cache.db"
    with ResponseCache(path, CacheMode.USE) as cache:
        assert cache.get(_key()) is None
        assert not path.parent.exists()
        cache.put(_key(), REPLY, kind="target")
        assert path.is_file()
        assert cache.get(_key()) == REPLY


def test_a_file_another_process_created_later_is_read(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    with ResponseCache(path, CacheMode.USE) as reader:
        assert reader.get(_key()) is None
        with ResponseCache(path, CacheMode.USE) as writer:
            writer.put(_key(), REPLY, kind="target")
        assert reader.get(_key()) == REPLY


def test_use_is_the_default_mode(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.db") as cache:
        assert cache.mode is CacheMode.USE
        assert repr(cache) == f"ResponseCache({str(tmp_path / 'c.db')!r}, mode='use')"


def test_off_mode_never_reads_writes_or_creates_the_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "c.db"
    with ResponseCache(path, CacheMode.USE) as cache:
        cache.put(_key(), REPLY, kind="target")
    with ResponseCache(path, CacheMode.OFF) as cache:
        assert cache.get(_key()) is None
        cache.put(_key(repeat_index=1), REPLY, kind="target")
        assert cache.stats == CacheStats()
    with ResponseCache(path, CacheMode.USE) as cache:
        assert cache.get(_key(repeat_index=1)) is None

    absent = tmp_path / "absent" / "c.db"
    with ResponseCache(absent, CacheMode.OFF) as cache:
        cache.put(_key(), REPLY, kind="target")
    assert not absent.parent.exists()


def test_record_mode_never_reads_and_refreshes_entries(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    with ResponseCache(path, CacheMode.USE) as cache:
        cache.put(_key(), {"output": "old"}, kind="target")
    with ResponseCache(path, CacheMode.RECORD) as cache:
        assert cache.get(_key()) is None
        cache.put(_key(), {"output": "new"}, kind="target")
        assert cache.stats == CacheStats(hits=0, misses=0, writes=1)
    with ResponseCache(path, CacheMode.USE) as cache:
        assert cache.get(_key()) == {"output": "new"}


def test_replay_mode_reads_and_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    with ResponseCache(path, CacheMode.USE) as cache:
        cache.put(_key(), REPLY, kind="target")
    with ResponseCache(path, CacheMode.REPLAY) as cache:
        assert cache.get(_key()) == REPLY
        cache.put(_key(repeat_index=1), REPLY, kind="target")
        assert cache.stats == CacheStats(hits=1, misses=0, writes=0)
    with ResponseCache(path, CacheMode.USE) as cache:
        assert cache.get(_key(repeat_index=1)) is None


def test_replay_miss_raises_a_user_error_naming_the_call(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    ResponseCache(path, CacheMode.USE).close()
    key = _key(repeat_index=3)
    with ResponseCache(path, CacheMode.REPLAY) as cache, pytest.raises(CacheMiss) as caught:
        cache.get(key)
    assert isinstance(caught.value, UserError)
    assert caught.value.key == key
    assert str(caught.value) == (
        f"cache miss in replay mode for target openai/gpt-4o-mini (repeat 3, key {key[:12]}); "
        "run once with --cache-mode use (or record) to fill the cache"
    )


def test_replay_without_a_cache_file_misses_and_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "absent" / "c.db"
    with ResponseCache(path, CacheMode.REPLAY) as cache:
        with pytest.raises(CacheMiss, match=r"^cache miss in replay mode for key abc;"):
            cache.get("abc")
        assert cache.stats == CacheStats(misses=1)
    assert not path.parent.exists()


def test_mode_accepts_its_cli_spelling(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.db", "replay") as cache:  # type: ignore[arg-type]
        assert cache.mode is CacheMode.REPLAY
    assert [m.value for m in CacheMode] == ["use", "off", "record", "replay"]


# -- storage ------------------------------------------------------------------------------


def test_entries_persist_across_instances_with_their_kind(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "c.db"
    judge_key = cache_key("judge", {"model": "j"}, repeat_index=0, template_version="t1")
    with ResponseCache(path) as cache:
        cache.put(_key(), REPLY, kind="target")
        cache.put(judge_key, {"score": 0.5, "reasoning": "ok"}, kind="judge")
    with ResponseCache(path) as cache:
        assert cache.get(_key()) == REPLY
        assert cache.get(judge_key) == {"score": 0.5, "reasoning": "ok"}
    with sqlite3.connect(path) as conn:
        kinds = sorted(row[0] for row in conn.execute("SELECT kind FROM responses"))
    conn.close()
    assert kinds == ["judge", "target"]


def test_default_path() -> None:
    assert Path(".assay/cache.db") == DEFAULT_CACHE_PATH


def test_non_json_value_is_a_type_error(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.db") as cache, pytest.raises(TypeError):
        cache.put(_key(), {"x": object()}, kind="target")


def test_closed_cache_refuses_calls(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.db")
    cache.close()
    cache.close()
    with pytest.raises(ValueError, match="is closed"):
        cache.get(_key())
    with pytest.raises(ValueError, match="is closed"):
        cache.put(_key(), REPLY, kind="target")


def test_threads_share_one_cache(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.db") as cache:

        def write(worker: int) -> None:
            for i in range(50):
                cache.put(f"{worker}-{i}", i, kind="target")

        threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [cache.get(f"{w}-49") for w in range(4)] == [49] * 4
        assert cache.stats.writes == 200


def _write_many(path: str, worker: int, count: int, start: Any) -> None:
    """Runs in a spawned process: its own connection to the shared file."""
    with ResponseCache(Path(path), CacheMode.USE) as cache:
        start.wait(timeout=30)  # both processes are connected before either writes
        for i in range(count):
            cache.put(f"{worker}-{i}", {"worker": worker, "i": i}, kind="target")


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2)
    workers = [
        context.Process(target=_write_many, args=(str(path), w, 200, start)) for w in range(2)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [worker.exitcode for worker in workers] == [0, 0]
    with ResponseCache(path, CacheMode.REPLAY) as cache:
        values = [cache.get(f"{w}-{i}") for w in range(2) for i in range(200)]
    assert values == [{"worker": w, "i": i} for w in range(2) for i in range(200)]


def test_corrupt_file_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    path.write_bytes(b"this is not an SQLite database, just some bytes " * 100)
    with pytest.raises(UsageError) as caught:
        ResponseCache(path)
    assert str(caught.value) == (
        f"{path}: the response cache file is unreadable (file is not a database); "
        "delete it and run again (it only holds cached model replies)"
    )


def test_other_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE runs (id TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(UsageError, match="it is an SQLite database, but not an assay cache"):
        ResponseCache(path)
    conn = sqlite3.connect(path)
    tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master")]
    conn.close()
    assert tables == ["runs"]


def test_newer_cache_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    ResponseCache(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(UsageError, match="it has cache format 99, this assay reads 1"):
        ResponseCache(path)


def test_an_entry_that_is_not_json_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    with ResponseCache(path) as cache:
        cache.put("k", REPLY, kind="target")
        conn = sqlite3.connect(path)
        conn.execute("UPDATE responses SET value = '{broken'")
        conn.commit()
        conn.close()
        with pytest.raises(UsageError, match=r"\(entry k is not JSON\); delete it"):
            cache.get("k")


def test_a_cache_path_that_cannot_be_created_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    cache = ResponseCache(tmp_path / "file" / "c.db")
    with cache, pytest.raises(UsageError, match=r"file/c.db: cannot create the response cache"):
        cache.put("k", REPLY, kind="target")
